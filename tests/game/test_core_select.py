"""``VectorGame.step(actions, games=...)`` and ``reset(games=...)``: only the selected games move
or are dealt anew; the others keep their state (the vector env's learner/opponent turns need it)."""

from __future__ import annotations

import numpy as np
import pytest

from okgin_env import VectorGame, random_legal_actions
from okgin_env.game.actions import PASS, TAKE_DISCARD


def state_row(game: VectorGame, i: int) -> dict[str, np.ndarray]:
    s = game.state
    return {name: getattr(s, name)[i].copy() for name in s._fields}


def assert_same_row(a: dict, b: dict) -> None:
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_step_moves_only_selected_games():
    deck = np.arange(52)
    g = VectorGame(3, seed=0)
    out = g.reset(decks=deck, dealers=0)
    before = [state_row(g, i) for i in range(3)]
    # games 0 and 2 pass; game 1 is not selected, so its (illegal) action is not even checked
    out = g.step(np.array([PASS, -5, TAKE_DISCARD]), games=np.array([True, False, True]))
    assert_same_row(state_row(g, 1), before[1])
    assert out.current_player.tolist() == [0, 1, 1]  # dealer 0: player 1 offered first, passed in game 0
    assert not out.rewards[1].any() and not (out.terminated | out.truncated | out.hand_over).any()
    # moving game 1 the same way as game 0 afterwards gives the same state
    g.step(np.array([0, PASS, 0]), games=[1])
    assert_same_row({k: v for k, v in state_row(g, 1).items()}, state_row(g, 0))


def test_step_selection_matches_full_steps():
    """Stepping every game through a random selection order ends where plain steps end."""
    rng = np.random.default_rng(3)
    a, b = VectorGame(8, seed=1), VectorGame(8, seed=1)
    oa, ob = a.reset(), b.reset()
    for _ in range(60):
        act = random_legal_actions(oa.legal_action_mask, rng)
        oa = a.step(act)
        first = rng.random(8) < 0.5
        o1 = b.step(act, games=first)
        ob = b.step(act, games=~first)
        for f in ("current_player", "legal_action_mask"):
            np.testing.assert_array_equal(getattr(oa, f), getattr(ob, f))
        np.testing.assert_array_equal(oa.observation, np.where(first[:, None], o1.observation, ob.observation))
    np.testing.assert_array_equal(a.state.scores, b.state.scores)


def test_finished_unselected_game_repeats_its_end():
    g = VectorGame(2, seed=0)
    out = g.reset()
    rng = np.random.default_rng(0)
    while not out.terminated[0] and not out.truncated[0]:
        out = g.step(random_legal_actions(out.legal_action_mask, rng), games=[0])
    ended = bool(out.terminated[0]), bool(out.truncated[0])
    out = g.step(random_legal_actions(out.legal_action_mask, rng), games=[1])
    assert (bool(out.terminated[0]), bool(out.truncated[0])) == ended
    assert not out.hand_over[0] and not out.rewards[0].any()


def test_reset_selected_games_only():
    g = VectorGame(3, seed=5)
    g.reset()
    g.step(random_legal_actions(g.legal_action_mask, np.random.default_rng(0)))
    kept = state_row(g, 1)
    decks = [np.arange(52), np.arange(52)[::-1]]
    out = g.reset(decks=decks, dealers=[0, 1], games=[0, 2])
    assert_same_row(state_row(g, 1), kept)
    np.testing.assert_array_equal(g.state.deck[0], decks[0])
    np.testing.assert_array_equal(g.state.deck[2], decks[1])
    assert g.state.dealer[[0, 2]].tolist() == [0, 1]
    assert out.current_player[[0, 2]].tolist() == [1, 0]


def test_reset_selected_draws_like_a_full_reset():
    """A one-game selection draws the same deal as resetting a one-game VectorGame (seeds line up)."""
    one, many = VectorGame(1, seed=9), VectorGame(4, seed=9)
    one.reset()
    many.reset(games=[2])
    np.testing.assert_array_equal(many.state.deck[2], one.state.deck[0])
    assert many.state.dealer[2] == one.state.dealer[0]


@pytest.mark.parametrize("games", [[5], [-1], np.ones(2, bool), [0.5], "all"])
def test_bad_selection(games):
    g = VectorGame(3, seed=0)
    g.reset()
    with pytest.raises(ValueError, match="games must be"):
        g.step(np.zeros(3, np.int64), games=games)
    with pytest.raises(ValueError, match="games must be"):
        g.reset(games=games)


def test_decks_per_selected_game_checked():
    g = VectorGame(3, seed=0)
    with pytest.raises(ValueError, match=r"one per game \(2\)"):
        g.reset(decks=[np.arange(52)] * 3, games=[0, 1])


def test_selected_step_observes_the_moved_games():
    """After selected steps and resets, the moved games' rows equal a fresh view, the other rows
    are zeros, and the mask covers every game (nothing stale)."""
    rng = np.random.default_rng(4)
    g = VectorGame(16, seed=2)
    out = g.reset()
    view = out.observation.copy()  # every game's current view, kept up to date from the outputs
    for t in range(80):
        sel = rng.random(16) < 0.6
        act = random_legal_actions(out.legal_action_mask, rng)
        out = g.step(act, games=sel)
        assert not out.observation[~sel].any()
        view[sel] = out.observation[sel]
        over = out.current_player < 0
        if over.any():
            out = g.reset(games=over)
            assert not out.observation[~over].any()
            view[over] = out.observation[over]
        cur = out.current_player
        np.testing.assert_array_equal(view, g.observe(cur))
        mask = g.legal_action_mask.copy()
        g.observe(cur)
        g._view(cur, write_mask=True)  # recompute every game's mask
        np.testing.assert_array_equal(out.legal_action_mask, g.legal_action_mask)
        np.testing.assert_array_equal(mask, g.legal_action_mask)


def test_observe_selected_games_only():
    g = VectorGame(4, seed=0)
    g.reset()
    full = g.observe(0)
    part = g.observe(0, games=[1, 3])
    np.testing.assert_array_equal(part[[1, 3]], full[[1, 3]])
    assert not part[[0, 2]].any()


@pytest.mark.parametrize("games", [[1, 3, 4], np.array([False, True, False, True, True, False])])
def test_observe_packed_gives_the_selected_rows_in_game_order(games):
    # Mid-hand, with a different player per game: the packed rows are the full view's rows.
    rng = np.random.default_rng(2)
    g = VectorGame(6, seed=2)
    out = g.reset()
    for _ in range(9):
        out = g.step(random_legal_actions(out.legal_action_mask, rng))
    players = np.array([0, 1, 1, 0, 1, 0])
    packed = g.observe(players, games=games, packed=True)
    assert packed.shape == (3, g.observe(0).shape[1])
    np.testing.assert_array_equal(packed, g.observe(players)[[1, 3, 4]])


def test_a_bad_observation_buffer_is_refused_before_any_game_moves():
    g = VectorGame(3, seed=1)
    out = g.reset()
    before = g.get_state()
    with pytest.raises(ValueError, match="observation must be"):
        g.step(random_legal_actions(out.legal_action_mask, np.random.default_rng(0)),
               observation=np.zeros((3, 5), np.float32))
    for name in before._fields:
        np.testing.assert_array_equal(getattr(g.state, name), getattr(before, name))


def test_observation_buffer_follows_every_game():
    """step/reset(observation=buf) write the moved games' views into buf and keep its other rows."""
    rng = np.random.default_rng(6)
    g = VectorGame(12, seed=3)
    buf = np.full((12, g.observe(0).shape[1]), 7.0, np.float32)
    out = g.reset(observation=buf)
    assert out.observation is buf
    for _ in range(60):
        sel = rng.random(12) < 0.5
        out = g.step(random_legal_actions(out.legal_action_mask, rng), games=sel, observation=buf)
        over = out.current_player < 0
        if over.any():
            g.reset(games=over, observation=buf)
        np.testing.assert_array_equal(buf, g.observe(np.maximum(g.state.current_player, 0)))
    with pytest.raises(ValueError, match="observation must be"):
        g.step(np.zeros(12, np.int64), games=[], observation=np.zeros((12, 3), np.float32))
