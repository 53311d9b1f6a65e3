"""Save and restore (``VectorGame.get_state`` / ``set_state`` / ``from_state``) and the state check.

A saved position, restored into a fresh game and stepped with the same actions, must play out
exactly as the original: same masks, observations, rewards and ends. A state the kernels could
not have reached is refused with a message naming the game and the problem.
"""

from __future__ import annotations

import numpy as np
import pytest

from okgin_env.game.actions import DRAW_STOCK, KNOCK, TAKE_DISCARD
from okgin_env.game.cards import parse_card
from okgin_env.game.core import (
    GameState,
    HandResult,
    Phase,
    VectorGame,
    check_state,
    random_legal_actions,
)
from okgin_env.game.rules import Rules

RULE_SETS = [Rules(), Rules(knock_limit=10, discard_taken_card=True), Rules(max_turns_per_hand=6, spade_double=True)]


def _play(game: VectorGame, out, rng: np.random.Generator, steps: int):
    for _ in range(steps):
        out = game.step(random_legal_actions(out.legal_action_mask, rng))
    return out


def _same_rng(dst: VectorGame, src: VectorGame) -> None:
    """Later deals (game episodes) come from the game's generator: line them up."""
    dst.rng = np.random.default_rng()
    dst.rng.bit_generator.state = src.rng.bit_generator.state


@pytest.mark.parametrize("rules", RULE_SETS)
@pytest.mark.parametrize("episode", ["hand", "game"])
def test_restore_then_replay_matches(rules: Rules, episode: str) -> None:
    rng = np.random.default_rng(5)
    game = VectorGame(48, rules=rules, episode=episode, seed=3)
    out = game.reset()
    for warmup in (0, 7, 25):  # offers, early and late play, some games over
        out = _play(game, out, rng, warmup)
        saved = game.get_state()
        copy = VectorGame.from_state(saved, rules=rules, episode=episode)
        _same_rng(copy, game)
        view = copy.set_state(saved)  # the view of the restored games
        np.testing.assert_array_equal(view.legal_action_mask, out.legal_action_mask)
        np.testing.assert_array_equal(view.observation, out.observation)
        np.testing.assert_array_equal(view.current_player, out.current_player)
        for _ in range(40):
            actions = random_legal_actions(out.legal_action_mask, rng)
            out, mine = game.step(actions), copy.step(actions)
            for name in ("legal_action_mask", "observation", "rewards", "terminated", "truncated", "hand_over",
                         "current_player"):
                np.testing.assert_array_equal(getattr(mine, name), getattr(out, name), err_msg=name)
            for name in HandResult._fields:
                np.testing.assert_array_equal(getattr(mine.result, name), getattr(out.result, name), err_msg=name)
        for name in GameState._fields:
            np.testing.assert_array_equal(getattr(copy.state, name), getattr(game.state, name), err_msg=name)


def test_set_state_refreshes_masks_where_assigning_state_did_not() -> None:
    game = VectorGame(1, seed=0)
    out = game.reset(decks=[list(range(52))], dealers=0)
    saved = game.get_state()  # the upcard offer: take or pass
    out = game.step([DRAW_STOCK + 2])  # pass
    out = game.step([DRAW_STOCK + 2])  # pass; the non-dealer must draw
    assert out.legal_action_mask[0].sum() == 1
    view = game.set_state(saved)
    assert view.legal_action_mask[0, TAKE_DISCARD]
    out = game.step([TAKE_DISCARD])  # legal again in the restored position
    assert game.state.phase[0] == Phase.DISCARD


def test_from_state_copies_and_subset_restore() -> None:
    game = VectorGame(3, seed=1)
    out = _play(game, game.reset(), np.random.default_rng(0), 9)
    saved = game.get_state([2, 0])
    tiled = VectorGame.from_state(saved, copies=4)
    assert tiled.num_games == 8
    np.testing.assert_array_equal(tiled.state.deck[:4], np.repeat(game.state.deck[[2]], 4, axis=0))
    np.testing.assert_array_equal(tiled.state.deck[4:], np.repeat(game.state.deck[[0]], 4, axis=0))
    np.testing.assert_array_equal(tiled.legal_action_mask[4], out.legal_action_mask[0])
    # restore one game of another batch from a row of this one
    other = VectorGame(2, seed=9)
    other.reset()
    view = other.set_state(game.get_state([1]), games=[1])
    assert view.observation.shape[0] == 1
    np.testing.assert_array_equal(other.legal_action_mask[1], out.legal_action_mask[1])
    np.testing.assert_array_equal(view.observation[0], out.observation[1])
    with pytest.raises(ValueError, match="state has 1 games but 2"):
        other.set_state(game.get_state([1]))
    with pytest.raises(ValueError, match="games must be game indices"):
        other.get_state([5])
    with pytest.raises(ValueError, match="copies must be an integer >= 1"):
        VectorGame.from_state(saved, copies=0)


def _discard_position() -> GameState:
    """One game in its discard phase after taking the upcard (player 1, the non-dealer, holds 11)."""
    game = VectorGame(1, seed=0)
    game.reset(decks=[list(range(52))], dealers=0)
    game.step([TAKE_DISCARD])
    return game.get_state()


def _move_card(s: GameState, card: str) -> None:
    c = parse_card(card)
    p = int(np.flatnonzero(s.hands[0, :, c])[0])
    s.hands[0, p, c] = False
    s.hands[0, 1 - p, c] = True


CORRUPTIONS = [
    ("card in two places", lambda s: s.hands.__setitem__((0, 0, int(s.deck[0, 30])), True),
     "a card is in more than one place"),
    ("card missing", lambda s: s.hands.__setitem__((0, 0, int(np.flatnonzero(s.hands[0, 0])[0])), False),
     "every card must be in a hand"),
    ("hand sizes", lambda s: _move_card(s, "2s"), "hands must hold 10 cards each"),
    ("phase vs done", lambda s: s.phase.__setitem__(0, Phase.OVER), "done, phase == OVER and current_player"),
    ("bad phase", lambda s: s.phase.__setitem__(0, 9), "phase must be in 0..5"),
    ("mover in offer", lambda s: (s.phase.__setitem__(0, Phase.OFFER_DEALER),
                                  s.hands.__setitem__((0, 1, 20), False), s.pile.__setitem__((0, 0), 20),
                                  s.pile_size.__setitem__(0, 1), s.taken.__setitem__((0, 1, 20), False),
                                  s.taken_card.__setitem__(0, -1)), "the mover must be"),
    ("draw with a full wall", lambda s: s.stock_next.__setitem__(0, 51), "a card is in more than one place|"
                                                                         "every card must be"),
    ("taken card not held", lambda s: s.taken_card.__setitem__(0, 0), "taken_card must be -1"),
    ("deck not a permutation", lambda s: s.deck.__setitem__((0, 0), s.deck[0, 1]), "deck must be a permutation"),
    ("knock limit range", lambda s: s.knock_limit.__setitem__(0, 11), "knock_limit must be in 0..10"),
    ("turn cap", lambda s: s.turns.__setitem__(0, 200), "turns < max_turns_per_hand"),
    ("scores in a hand episode", lambda s: s.scores.__setitem__((0, 0), 5), "scores and hands_won 0"),
    ("taken outside hands", lambda s: s.taken.__setitem__((0, 0, 51), True), "taken .* must be a subset of hands"),
]


@pytest.mark.parametrize("name,corrupt,message", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupted_states_are_refused(name, corrupt, message) -> None:
    s = _discard_position()
    check_state(s, Rules(), "hand")  # the uncorrupted position passes
    corrupt(s)
    game = VectorGame(1, seed=0)
    with pytest.raises(ValueError, match=f"invalid state in game 0 of 1: .*({message})"):
        game.set_state(s)


def test_bad_shapes_and_dtypes_are_refused() -> None:
    game = VectorGame(1, seed=0)
    s = _discard_position()
    s = s._replace(hands=s.hands.astype(np.int8))
    with pytest.raises(ValueError, match="state.hands must have dtype bool, got int8"):
        game.set_state(s)
    s = _discard_position()
    s = s._replace(pile=s.pile[:, :10])
    with pytest.raises(ValueError, match=r"state.pile must have shape \(N, 52\)"):
        game.set_state(s)
    with pytest.raises(ValueError, match="state must be an okgin_env.game.core.GameState"):
        game.set_state({"deck": 1})


def test_a_knocked_hand_may_miss_the_face_down_discard() -> None:
    """After a knock the discard lies face down: a finished state with one card nowhere is valid."""
    game = VectorGame(64, seed=2)
    out = game.reset()
    rng = np.random.default_rng(1)
    while not (out.terminated | out.truncated).all():
        actions = random_legal_actions(out.legal_action_mask, rng)
        can_knock = out.legal_action_mask[:, KNOCK:DRAW_STOCK]
        actions = np.where(can_knock.any(axis=1), KNOCK + can_knock.argmax(axis=1), actions)  # knock when it may
        out = game.step(actions)
    knocked = game.state.hands.sum(axis=(1, 2)) + (52 - game.state.stock_next) + game.state.pile_size == 51
    assert knocked.any()
    copy = VectorGame.from_state(game.get_state())
    after = copy.step(np.zeros(64, np.int64))  # finished games ignore actions and repeat how they ended
    np.testing.assert_array_equal(after.terminated, out.terminated)
    np.testing.assert_array_equal(after.truncated, out.truncated)
