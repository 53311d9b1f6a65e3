"""A match as the results store keeps it (``MatchRecord``), and what names an agent: its kind and the hash
of its weights. No SQLAlchemy here: evaluate.py builds its records without importing the database layer
(its writer process does that, ``okgin.arena.recorder``)."""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Sequence

import numpy as np

def rules_key(rules: dict) -> str:
    """A rule set as one comparable string: sorted compact JSON (``matches.rules_key``)."""
    return json.dumps(rules, sort_keys=True, separators=(",", ":"))


HAND_COLUMNS = ("game", "deal", "seat_a", "win", "points", "void", "knocker", "gin", "undercut", "forfeit")
AGENT_KINDS = ("bot", "plugin", "model", "person")


# ----------------------------------------------------------------------------- agents

_HASHES: dict[tuple[str, int, int], str] = {}


def weights_file(spec: str) -> str | None:
    """The weights file a spec reads (``ppo:PATH``, ``search:K:PATH``): the first text after a ``:`` that
    names an existing file, else None."""
    rest = spec
    while ":" in rest:
        rest = rest.split(":", 1)[1]
        if rest and os.path.isfile(rest):
            return rest
    return None


def weights_sha256(spec: str) -> str | None:
    """sha256 of the spec's weights file (``weights_file``), cached by path, size and modification time."""
    path = weights_file(spec)
    if path is None:
        return None
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]


def agent_kind(spec: str) -> str:
    """bot (a bundled or registered name), plugin (``module:Attr``), model (``llm:...``) or person (``person:NAME``)."""
    head = spec.split(":", 1)[0].strip().lower()
    if head in ("llm", "person"):
        return {"llm": "model", "person": "person"}[head]
    from okgin_env.agent_specs import is_registered

    return "bot" if head == "random" or is_registered(head) else "plugin"


def default_agent_name(spec: str, sha: str | None) -> str:
    """A stored agent's name when none is given: the spec, with the weights' hash prefix when it reads a file
    (one path can hold different checkpoints over time)."""
    return spec if sha is None else f"{spec}@{sha[:12]}"


# ----------------------------------------------------------------------------- a match to record

@dataclass
class HandTable:
    """Every hand of a match, A's view (``schema.hands``), one array per column, all of one length."""

    game: np.ndarray
    deal: np.ndarray
    seat_a: np.ndarray
    win: np.ndarray
    points: np.ndarray
    void: np.ndarray
    knocker: np.ndarray  #: 0 A, 1 B, -1 nobody
    gin: np.ndarray
    undercut: np.ndarray
    forfeit: np.ndarray  #: -1 none, 0 A, 1 B

    def __post_init__(self) -> None:
        lengths = {len(getattr(self, c)) for c in HAND_COLUMNS}
        if len(lengths) > 1:
            raise ValueError(f"every hand column needs one length, got {sorted(lengths)}")

    def __len__(self) -> int:
        return len(self.win)

    def rows(self) -> list[tuple]:
        """(idx, *columns) tuples as Python scalars (``tolist`` converts in C, no per-cell loop)."""
        cols = [np.arange(len(self)).tolist()]
        for c, kind in zip(HAND_COLUMNS, (int, int, int, float, int, bool, int, bool, bool, int)):
            arr = np.asarray(getattr(self, c))
            cols.append(arr.astype(kind).tolist())
        return list(zip(*cols))


@dataclass
class GameRow:
    """One game (a full game to the target, or one hand where the match plays hand episodes)."""

    deal: int
    seat_a: int
    winner: int | None  #: 0 A, 1 B, None unfinished / void
    score_a: int
    score_b: int
    hands: int
    seed: int | None = None
    log: dict | None = None


@dataclass
class MatchRecord:
    """What ``Store.record`` writes: the agents, the rules, the seeds and every hand and game."""

    spec_a: str
    spec_b: str
    rules: dict  #: Rules.to_dict()
    seed: int
    hands: HandTable
    games: list[GameRow] = field(default_factory=list)
    source: str = "api"  #: evaluate | ladder | web | api
    episode: str = "hand"  #: what a GameRow is: "hand" or "game"
    duplicate: bool = True
    deal_set: str | None = None  #: matches sharing one played the same deals (default: the uid: its own)
    agent_seeds: Sequence[int] | None = None
    name_a: str | None = None  #: the stored agents' names (default: ``default_agent_name``)
    name_b: str | None = None
    kind_a: str | None = None  #: the agents' kinds (default: ``agent_kind`` of the spec)
    kind_b: str | None = None
    uid: str = field(default_factory=lambda: uuid.uuid4().hex)
    started_at: datetime | None = None
    seconds: float = 0.0
    meta: dict | None = None
    counted: bool = True  #: False: kept but left out of the ratings (a game a person abandoned)
