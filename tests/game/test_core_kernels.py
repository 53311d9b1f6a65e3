"""The kernel boundary of ``okgin_env.game.core``: the state record, every output float written, the picker.

The kernels take the state as the ``GameState`` record itself (its plain tuple across the Python
boundary); these tests pin that, that the phases the kernels write are the ``Phase`` enum's, and
that the pieces rewritten for speed still do what the slow forms did.
"""

from __future__ import annotations

import numpy as np
import pytest

from okgin_env.game import constants
from okgin_env.game.actions import NUM_ACTIONS
from okgin_env.game.core import GameState, Phase, VectorGame, random_legal_actions
from okgin_env.game.kernels import observe_kernel
from okgin_env.game.observation import OBS_SIZE
from okgin_env.game.records import ObserveRequest
from okgin_env.game.rules import Rules


def test_the_state_record_is_the_game_state():
    # the kernels receive GameState's own fields in its own order: nothing else keeps an order
    state = GameState.empty(3)
    assert state.arrays() == tuple(state) and GameState(*state.arrays()) == state
    assert state.stock_next is state.arrays()[GameState._fields.index("stock_next")]
    rows = state.rows([2, 0])
    assert all(len(a) == 2 for a in rows) and rows.taken_card.tolist() == [-1, -1]


def test_phase_constants_are_the_enum_values():
    for ph in Phase:
        assert getattr(constants, "PH_" + ph.name) == int(ph)


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
            ask = ObserveRequest(np.arange(64), players, np.arange(64), np.zeros(0, bool), True)
            observe_kernel(game.kernel_core, ask, (obs, mask), (obs, mask))
            assert not np.isnan(obs).any()
            if players is mover:
                np.testing.assert_array_equal(obs, out.observation)
                np.testing.assert_array_equal(mask, out.legal_action_mask)
    assert {int(Phase.DRAW), int(Phase.DISCARD)} <= seen
