"""A hand's result as fixed-shape numbers and arrays: what the environments put in ``info``.

Replay buffers and vectorisers stack infos (Tianshou's ``VectorReplayBuffer``, Gymnasium's
``SyncVectorEnv``): every value must keep one type and shape whatever the hand (a void hand has
no knocker, a gin hand no lay-offs). So ``info["hand_result"]`` holds no lists of card texts;
``okgin_env.render.text.describe_hand`` turns it into the readable dict (melds, lay-offs, card texts)
that ``render_hand_result``, ``play.py`` and the web table show.

Keys (players are ids 0/1, -1 for "nobody"; cards are indices 0-51, -1 for "no card"):

==================  =====================  ==================================================
key                 type / shape           meaning
==================  =====================  ==================================================
knocker, winner     int                    who knocked / scored (-1 on a void hand)
gin, undercut       bool                   how the hand ended
void, turn_cap      bool                   no score; ``turn_cap``: void by the turn cap
spade_doubled       bool                   points doubled by a spade upcard
deadwood            int32 (2,)             knocker K, defender D after lay-offs (own best when void)
points, scores      int32 (2,)             this hand's points; totals after it
game_over           bool                   a game episode ended with this hand
game_winner         int                    -1 unless ``game_over``
hands               bool (2, 52)           both final hands (the knocker's without its knock card)
meld_id             int8 (52,)             meld of each card on the showdown, -1 deadwood/none
laid_off            bool (52,)             defender cards laid off onto the knocker's melds
knock_card          int                    the face-down discard (-1 on a void hand)
upcard, dealer      int                    the hand's first upcard; the dealer's id
knock_limit         int                    the hand's knock limit (-1 where not known)
==================  =====================  ==================================================

The vector env's ``hand_result`` holds the ``SUMMARY_FIELDS`` (no cards, no ``knock_limit``), each
batched over games.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from okgin_env.game.core import HandResult

#: info key -> the ``HandResult`` field that holds it (the vector env reads the same table)
RESULT_FIELDS = {
    "knocker": "knocker", "winner": "winner", "gin": "gin", "undercut": "undercut", "void": "void",
    "turn_cap": "truncated_hand", "spade_doubled": "spade_doubled", "deadwood": "deadwood", "points": "points",
    "scores": "scores", "game_over": "game_over", "game_winner": "game_winner", "hands": "hands",
    "meld_id": "meld_id", "laid_off": "laid_off", "knock_card": "knock_card", "upcard": "upcard", "dealer": "dealer",
}
#: the keys of the vector env's batched ``hand_result`` (what its kernels book per game)
SUMMARY_FIELDS = {k: v for k, v in RESULT_FIELDS.items()
                  if k not in ("hands", "meld_id", "laid_off", "knock_card", "upcard", "dealer")}
_SCALARS = {"knocker": int, "winner": int, "gin": bool, "undercut": bool, "void": bool, "turn_cap": bool,
            "spade_doubled": bool, "game_over": bool, "game_winner": int, "knock_card": int, "upcard": int,
            "dealer": int}


def hand_info(result: HandResult, game: int = 0, knock_limit: int | None = None) -> dict[str, Any]:
    """Row ``game`` of a core ``HandResult`` (valid where ``hand_over``) as the fixed-shape dict of
    the module docstring: Python ints and bools, and numpy arrays copied out of the result."""
    info: dict[str, Any] = {}
    for key, field in RESULT_FIELDS.items():
        value = getattr(result, field)[game]
        info[key] = _SCALARS[key](value) if key in _SCALARS else np.array(value)
    info["knock_limit"] = -1 if knock_limit is None else int(knock_limit)
    return info
