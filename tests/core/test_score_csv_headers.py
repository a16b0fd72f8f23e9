"""Score and reference CSVs (issue 47, 5): a column named twice in the header is refused (the
reader kept the last one: ``task,score,score`` scored the wrong column), and a UTF-8 byte order
mark (Excel's "CSV UTF-8") is no part of the first column's name."""

from __future__ import annotations

import json

import pytest

from tests.conftest import refused_in_process


@pytest.mark.parametrize("header", ["task,score,score", "task,task,score", "task,score, score"])
def test_a_column_named_twice_is_refused(tmp_path, capsys, header):
    csv = tmp_path / "scores.csv"
    csv.write_text(f"{header}\ncount-20,1,999\n")
    refused_in_process(capsys, "twice", "score", "toy", csv)


def test_a_reference_table_with_a_column_named_twice_is_refused(tmp_path):
    from benchgen.errors import UsageError
    from benchgen.results.compare.references import read_reference_csv

    csv = tmp_path / "ref.csv"
    csv.write_text("task,frames_10M,frames_10M\ncount-20,1,2\n")
    with pytest.raises(UsageError, match="'frames_10M' twice"):
        read_reference_csv(csv)


def test_a_byte_order_mark_is_read_past(tmp_path, capsys):
    from benchgen.cli import main

    csv = tmp_path / "excel.csv"
    csv.write_bytes("task,score\ncount-20,7\n".encode("utf-8-sig"))
    capsys.readouterr()
    assert main(["score", "toy", str(csv), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["raw"] == {"count-20": 7.0}
