"""Atari scoring: world-record (SABER eq. 1), human-beginner and reference-agent (SABER eq. 2)
normalization, all as ``s = (a - r) / |w - r|`` with ``r`` the random score.

Baselines (``--baseline``):

* ``world_record`` (default): TwinGalaxies records (58 games; SABER's headline).
* ``human``: human beginner scores (Mnih et al. 2015).
* ``rainbow_iqn_saber``: SABER's Rainbow-IQN trained 200M frames under this protocol (Table 6);
  ``rainbow_iqn_saber@10M`` / ``@50M`` / ``@100M`` / ``@200M`` pick another checkpoint.
* ``human_atari100k``: the human scores of the Atari 100K papers (26 games), normalized with
  *their* random scores (``(a - r') / |h - r'|``, ``r'`` from ``data/atari100k_random_human.csv``,
  e.g. Alien 227.8 where SABER's random agent scores 211.9): the human-normalized score of Kaiser et
  al. 2020, SPR, Agarwal et al. 2021 and BBF. The default for runs of the ``atari100k`` protocol
  (:meth:`AtariScorer.default_baseline_for`); ``--baseline world_record`` still applies to them.

Games without a reference (no world record, no human score) are reported raw and left out of
the aggregates. A reference agent that reached infinite gameplay on a game gives no finite
yardstick there (``|w - r| = inf``), so such games are also left unnormalized.

Flavor tasks (``game:mMdD``, another mode or difficulty; ``flavors.py``) are always reported raw
and left out of the normalized aggregates, whatever the baseline: every random score, record and
reference agent score here was measured on the game's default mode and difficulty, and a flavor
can be much easier or harder (Freeway's modes change the traffic, Breakout's difficulty 1
narrows the paddle from 16 to 12 pixels), so the default game's yardstick means something else there.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from benchgen.scoring import ReferenceScores, Scorer
from benchgen_atari_saber import tables
from benchgen_atari_saber.flavors import is_flavor_task

#: the checkpoint SABER reports its final Rainbow-IQN numbers at
RAINBOW_IQN_DEFAULT_CHECKPOINT = "200M"
#: the Atari 100K papers' human-normalized score (module docstring)
HUMAN_ATARI100K = "human_atari100k"
#: protocol preset -> the baseline its runs are normalized against by default
PROTOCOL_BASELINES = {"atari100k": HUMAN_ATARI100K}


def reference_tables() -> list[ReferenceScores]:
    """The suite's published baselines (``AtariSaberSuite.reference_scores``)."""
    games = tables.games()
    iqn = tables.rainbow_iqn_saber()
    hundred_k = tables.atari100k_random_human()
    return [
        ReferenceScores(
            name="world_record",
            scores={g.game: g.world_record for g in games if g.world_record is not None},
            description="TwinGalaxies world records, July 2019 (SABER eq. 1)",
            source="SABER (Toromanoff et al. 2019), Table 5",
        ),
        ReferenceScores(
            name="human",
            scores={g.game: g.human_beginner for g in games if g.human_beginner is not None},
            description="human beginner scores (Mnih et al. 2015)",
            source="Mnih et al. 2015, as listed in SABER (Toromanoff et al. 2019), Table 5",
        ),
        ReferenceScores(
            name="rainbow_iqn_saber",
            scores=dict(iqn[RAINBOW_IQN_DEFAULT_CHECKPOINT]),
            description="SABER Rainbow-IQN, SABER protocol, 200M frames (Table 6; eq. 2 as reference)",
            by_checkpoint={label: dict(scores) for label, scores in iqn.items()},
            source="SABER (Toromanoff et al. 2019), Table 6",
            spread=dict(tables.rainbow_iqn_saber_std()[RAINBOW_IQN_DEFAULT_CHECKPOINT]),
            protocol={"protocol": "saber"},
        ),
        ReferenceScores(
            name=HUMAN_ATARI100K,
            scores={game: human for game, (_, human) in hundred_k.items()},
            description="human scores of the Atari 100K papers (26 games), normalized with their own random "
            "scores (Alien: random 227.8, human 7127.7)",
            source="SPR (Schwarzer et al. 2021), Table 1, columns Random and Human; the same in Dopamine's "
            "labs/atari_100k/normalization_utils.py",
            random={game: random for game, (random, _) in hundred_k.items()},
        ),
    ]


def random_scores() -> dict[str, float]:
    """Random-agent score per game (the ``r`` of every normalization)."""
    return {g.game: g.random for g in tables.games()}


class AtariScorer(Scorer):
    """Scorer for ``atari_saber``: world record by default, checkpoints as ``name@label``."""

    default_baseline = "world_record"

    def __init__(self):
        super().__init__(random_scores(), {ref.name: ref for ref in reference_tables()})

    def default_baseline_for(self, protocol: Mapping[str, Any]) -> str:
        """``human_atari100k`` for runs of the ``atari100k`` preset (and of a custom protocol based on
        it), :attr:`default_baseline` (world records) otherwise."""
        name = protocol.get("protocol_base") if protocol.get("protocol") == "custom" else protocol.get("protocol")
        return PROTOCOL_BASELINES.get(str(name), self.default_baseline)

    def baselines(self) -> list[str]:
        """Names accepted by ``--baseline``, checkpoint variants included."""
        names = set(self.references)
        for ref in self.references.values():
            names.update(f"{ref.name}@{label}" for label in ref.by_checkpoint)
        return sorted(names)

    def reference(self, baseline: str | None) -> ReferenceScores:
        """Resolve ``name``, ``name@checkpoint`` or a CSV path; drop infinite reference scores."""
        if baseline and "@" in baseline and baseline.split("@", 1)[0] in self.references:
            name, label = baseline.split("@", 1)
            table = self.references[name]
            if label not in table.by_checkpoint:
                ref = super().reference(baseline)  # raises the standard "unknown baseline" error
            else:
                ref = replace(table, name=baseline, scores=dict(table.by_checkpoint[label]))
        else:
            ref = super().reference(baseline)
        # SABER eq. 2 needs a finite w: an infinite-gameplay reference normalizes nothing
        finite = {task: w for task, w in ref.scores.items() if not math.isinf(w)}
        if len(finite) != len(ref.scores):
            ref = replace(ref, scores=finite)
        return ref

    def score(self, raw: Mapping[str, float], baseline: str | None = None) -> dict:
        """:meth:`Scorer.score`, with flavor tasks always under ``unnormalized`` (module docstring),
        even if a baseline CSV lists them."""
        flavored = {task: value for task, value in raw.items() if is_flavor_task(task)}
        result = super().score({task: value for task, value in raw.items() if task not in flavored}, baseline)
        result["raw"] = dict(raw)
        result["unnormalized"].update(flavored)
        return result
