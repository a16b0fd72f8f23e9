"""Reading the files a user hands benchgen (configs, splits, protocols, score and reference CSVs)
and the YAML a user types (``--set``, ``--vary``): one safe reader for all of them.

* Only **regular files** are read: a FIFO, a device (``/dev/zero``), a socket or a directory is
  refused in one line, and a FIFO is opened without blocking, so nothing waits for a writer.
* A file is read up to :data:`MAX_INPUT_BYTES`; a larger one is refused (these files are a few
  kilobytes; a mistaken path to a dataset or a disk image should not fill memory).
* YAML is parsed by PyYAML's safe loader with bounds: at most :data:`MAX_YAML_DEPTH` levels of
  nesting (deeper input would overflow Python's stack) and at most :data:`MAX_YAML_NODES` values
  once aliases are expanded (an alias "bomb" of a few hundred bytes expands to billions);
  an alias that refers to itself is refused.

Every failure is a one-line :class:`~benchgen.errors.UsageError` naming the file and what to do.
"""

from __future__ import annotations

import csv
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from benchgen.errors import UsageError

#: the largest input file benchgen reads (bytes)
MAX_INPUT_BYTES = 16 * 2**20
#: the deepest nesting of YAML collections accepted
MAX_YAML_DEPTH = 64
#: the most YAML values (scalars and collections) accepted, aliases expanded
MAX_YAML_NODES = 1_000_000

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_input_bytes(path: str | Path, what: str, missing_hint: str = "", limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (``what`` names it in messages: "config file"),
    at most ``limit`` of them; one-line ``UsageError`` otherwise."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (FileNotFoundError, NotADirectoryError):
        raise UsageError(f"{what} {path} does not exist{missing_hint}") from None
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read ({exc.strerror or exc}); check its permissions") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise UsageError(f"{what} {path} is a directory, not a file{missing_hint}")
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise UsageError(f"{what} {path} is {kind}; give a regular file")
        too_big = UsageError(
            f"{what} {path} is larger than {limit // 2**20} MiB, more than such a file can be; give the right file"
        )
        if info.st_size > limit:
            raise too_big
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(2**20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:  # it grew while being read
            raise too_big
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read ({exc.strerror or exc}); check it") from None
    finally:
        os.close(fd)


def read_input_text(path: str | Path, what: str, missing_hint: str = "", expect: str = "a text file") -> str:
    """:func:`read_input_bytes` decoded as UTF-8 (``expect`` says what to give instead of a
    binary file: "a YAML file", "a CSV with columns task,score"). A leading byte order mark is
    dropped: Excel's "CSV UTF-8" and some Windows editors write one, and it is no part of the
    first column's name."""
    data = read_input_bytes(path, what, missing_hint)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise UsageError(f"{what} {path} is not a text file (not UTF-8); give {expect}") from None


def csv_reader(lines: Iterable[str], where: str) -> csv.DictReader:
    """A ``csv.DictReader`` of a user's CSV ``lines``, its header checked: a column named twice
    (``task,score,score``) is one line, where the reader would silently keep the last column's
    values."""
    reader = csv.DictReader(lines)
    names = [name.strip() for name in reader.fieldnames or []]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(
            f"{where}: the header names the column {', '.join(repr(n) for n in twice)} twice; give each column once"
        )
    return reader


class YAMLLimitError(yaml.YAMLError):
    """YAML that parses but exceeds the bounds of :func:`load_yaml` or breaks its rules (its
    message says which)."""


class _BoundedLoader(yaml.SafeLoader):
    """PyYAML's safe loader, composing at most :data:`MAX_YAML_DEPTH` levels deep."""

    _depth = 0

    def compose_node(self, parent, index):
        if self._depth >= MAX_YAML_DEPTH:
            raise YAMLLimitError(f"nested more than {MAX_YAML_DEPTH} levels deep")
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        # a key written twice in one mapping: PyYAML keeps the last value silently, so a setting
        # given twice in a config or protocol file would be half ignored (merged keys, `<<`, may
        # still be overridden: they are not written in this mapping)
        if isinstance(node, yaml.MappingNode):
            seen: dict[tuple[str, str], int] = {}
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                    key, line = (key_node.tag, key_node.value), key_node.start_mark.line + 1
                    if key in seen:
                        raise YAMLLimitError(f"gives the key {key_node.value!r} twice (lines {seen[key]} and {line})")
                    seen[key] = line
        return super().construct_mapping(node, deep)


def _children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_expanded_size(root) -> None:
    """Refuse a node graph (aliases share nodes) that expands to more than MAX_YAML_NODES values
    or holds a cycle (an alias inside the collection it names)."""
    busy = object()
    sizes: dict[int, Any] = {}
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            size = 1 + sum(sizes[id(child)] for child in _children(node))
            if size > MAX_YAML_NODES:
                raise YAMLLimitError(f"expands to more than {MAX_YAML_NODES:,} values (through its aliases)")
            sizes[id(node)] = size
            continue
        seen = sizes.get(id(node))
        if seen is busy:
            raise YAMLLimitError("has an alias inside the collection it refers to")
        if seen is not None:
            continue
        sizes[id(node)] = busy
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` within the bounds above: ``yaml.YAMLError`` for bad YAML,
    :class:`YAMLLimitError` (one of them) for YAML past the bounds."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_expanded_size(node)
        return loader.construct_document(node)
    except RecursionError:  # pragma: no cover - the depth bound comes first
        raise YAMLLimitError("nested too deeply") from None
    finally:
        loader.dispose()


def parse_yaml(text: str, where: str, hint: str = "fix it and retry") -> Any:
    """:func:`load_yaml` with one-line ``UsageError``s that name ``where`` the text came from."""
    try:
        return load_yaml(text)
    except YAMLLimitError as exc:
        raise UsageError(f"{where} {exc}; {hint}") from None
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise UsageError(f"{where} does not parse as YAML ({first}); {hint}") from None


def read_yaml(path: str | Path, what: str, missing_hint: str = "") -> Any:
    """Parse a user's YAML file (regular, bounded in size, depth and aliases); one-line
    ``UsageError`` when it is missing, not a regular file, too large, not text or not YAML.

    ``what`` names the file in messages ("config file", "split file")."""
    text = read_input_text(path, what, missing_hint, expect="a YAML file")
    return parse_yaml(text, f"{what} {Path(path)}")
