"""The kernel boundary of ``okgin_env.core``: fields by name, every output float written, the picker.

The kernels take the state as one tuple read through index constants (``st[ST_HANDS]``); these
tests pin that the constants follow the dataclass, that the phases the kernels write are the
``Phase`` enum's, and that the pieces rewritten for speed still do what the slow forms did.
"""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest

from okgin_env import core
from okgin_env.actions import NUM_ACTIONS
from okgin_env.core import GameState, HandResult, Phase, VectorGame, random_legal_actions
from okgin_env.observation import OBS_SIZE
from okgin_env.rules import Rules


def test_state_index_constants_follow_the_dataclass_fields():
    names = [f.name for f in fields(GameState)]
    state = GameState.empty(3)
    arrays = state.arrays()
    assert len(arrays) == len(names)
    for name in names:
        assert arrays[getattr(core, "ST_" + name.upper())] is getattr(state, name)


def test_result_index_constants_follow_the_packed_arrays():
    r = HandResult(2)
    packed = r.arrays()
    assert packed[core.RES_INTS] is r.ints and packed[core.RES_BOOLS] is r.bools
    assert packed[core.RES_CARDS] is r.cards and packed[core.RES_MELD_ID] is r.meld_id


def test_a_misordered_index_constant_fails_at_import_time():
    # The same check the module runs on itself, fed a field list whose first two names are swapped.
    swapped = ("hands", "deck") + core._STATE_FIELDS[2:]
    with pytest.raises(RuntimeError, match="ST_HANDS must be 0"):
        core._check_indices("ST_", swapped)


def test_phase_constants_are_the_enum_values():
    for ph in Phase:
        assert getattr(core, "PH_" + ph.name) == int(ph)


def _reference_pick(mask: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The documented rule in plain numpy: the int(u * n)-th legal action of each row, 0 if none."""
    out = np.zeros(len(mask), np.int64)
    for i, row in enumerate(mask):
        legal = np.flatnonzero(row)
        if len(legal):
            out[i] = legal[int(u[i] * len(legal))]
    return out


@pytest.mark.parametrize("density", [0.0, 0.02, 0.3, 1.0])
def test_random_legal_actions_picks_the_kth_legal_action(density):
    rng = np.random.default_rng(7)
    mask = rng.random((200, NUM_ACTIONS)) < density
    u = np.random.default_rng(11).random(200)
    got = random_legal_actions(mask, np.random.default_rng(11))  # draws the same u
    np.testing.assert_array_equal(got, _reference_pick(mask, u))
    has_legal = mask.any(axis=1)
    assert mask[np.flatnonzero(has_legal), got[has_legal]].all()
    assert (got[~has_legal] == 0).all()


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_observe_kernel_writes_every_float(episode):
    # The kernel zeroes only the sparse fields and copies the others whole, so an output buffer
    # full of NaN must come back without one, for movers in every phase and for the other player.
    game = VectorGame(64, Rules(), episode=episode, autoreset=True, seed=5)
    rng = np.random.default_rng(5)
    out = game.reset()
    seen = set()
    for _ in range(120):
        out = game.step(random_legal_actions(out.legal_action_mask, rng))
        seen.update(np.unique(game.state.phase).tolist())
        mover = game.state.current_player.astype(np.int64)
        for players in (mover, np.where(mover >= 0, 1 - mover, -1)):
            obs = np.full((64, OBS_SIZE), np.nan, np.float32)
            mask = np.ones((64, NUM_ACTIONS), bool)
            core._observe_kernel(np.arange(64), players, True, game._rp, game.state.arrays(), obs, mask)
            assert not np.isnan(obs).any()
            if players is mover:
                np.testing.assert_array_equal(obs, out.observation)
                np.testing.assert_array_equal(mask, out.legal_action_mask)
    assert {int(Phase.DRAW), int(Phase.DISCARD)} <= seen
