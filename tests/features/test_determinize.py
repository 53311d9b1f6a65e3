"""Determinization: sampled worlds reproduce the observation and spread the unseen cards uniformly."""

from __future__ import annotations

import numpy as np
import pytest

from okgin_env.features.determinize import determinize
from okgin_env.game import melds
from okgin_env.game.core import Phase, VectorGame, check_state, random_legal_actions
from okgin_env.game.observation import OBS_FIELDS
from okgin_env.game.rules import Rules

WORLDS = 3


def _positions(rules: Rules, episode: str, seed: int, games: int = 96, steps: int = 70):
    """(observation, mask, player) of the mover at every step of random games."""
    game = VectorGame(games, rules=rules, episode=episode, seed=seed)
    out = game.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        live = out.current_player >= 0
        if live.any():
            yield out.observation[live], out.legal_action_mask[live], out.current_player[live], game.state.phase[live]
        out = game.step(random_legal_actions(out.legal_action_mask, rng))


@pytest.mark.slow
@pytest.mark.parametrize("rules,episode", [
    (Rules(), "hand"),
    (Rules(knock_limit=10, discard_taken_card=True, spade_double=True), "hand"),
    (Rules(max_turns_per_hand=12), "hand"),
    (Rules(target_score=60, game_bonuses=True), "game"),
])
@pytest.mark.parametrize("draws", [0, 5])
def test_every_world_reproduces_the_observation_and_mask(rules: Rules, episode: str, draws: int) -> None:
    rng = np.random.default_rng(draws)
    phases = set()
    for obs, mask, player, phase in _positions(rules, episode, seed=11):
        phases |= set(phase.tolist())
        for p in (0, 1):  # the observer's id in the worlds is free
            worlds = determinize(obs, WORLDS, rng, rules=rules, episode=episode, player=p, opponent_draws=draws)
            check_state(worlds, rules, episode)
            game = VectorGame.from_state(worlds, rules=rules, episode=episode)
            np.testing.assert_array_equal(game.observe(p), np.repeat(obs, WORLDS, axis=0))
            np.testing.assert_array_equal(game.legal_action_mask, np.repeat(mask, WORLDS, axis=0))
            assert (game.state.current_player == p).all()
    assert phases == {int(x) for x in Phase if x != Phase.OVER}


def _midgame_observation() -> np.ndarray:
    """Player 0's draw decision in a game where the opponent has taken cards from the pile."""
    game = VectorGame(256, seed=4)
    out = game.reset()
    rng = np.random.default_rng(4)
    taken = OBS_FIELDS["opp_taken"]
    for _ in range(200):
        ok = (out.current_player >= 0) & (game.state.phase == Phase.DRAW) & \
            (out.observation[:, taken].sum(axis=1) >= 2) & (game.state.stock_next < 40)
        if ok.any():
            return out.observation[np.flatnonzero(ok)[0]]
        out = game.step(random_legal_actions(out.legal_action_mask, rng))
    raise AssertionError("no suitable position")


def _chi2_critical(df: int, z: float = 3.09) -> float:
    """Upper 0.1% point of chi-square(df) (Wilson-Hilferty; z = the normal 99.9% quantile)."""
    return df * (1 - 2 / (9 * df) + z * np.sqrt(2 / (9 * df))) ** 3


def test_unseen_cards_are_dealt_uniformly() -> None:
    obs = _midgame_observation()
    n = 20000
    worlds = determinize(obs[None], n, np.random.default_rng(123))
    opp = worlds.hands[:, 1]
    known = obs[OBS_FIELDS["opp_taken"]] > 0.5
    assert opp[:, known].all()  # cards it took are in its hand in every world
    seen = (obs[OBS_FIELDS["own_hand"]] + obs[OBS_FIELDS["discard_top"]] + obs[OBS_FIELDS["pile_buried"]]) > 0.5
    unseen = ~seen & ~known
    big, m = int(unseen.sum()), 10 - int(known.sum())
    assert not opp[:, seen].any()
    # opponent's hand: each world holds a uniform m-subset of the big unseen cards; the counts'
    # covariance is n p (1 - p) N / (N - 1) (I - 11'/N), so this statistic is chi-square(N - 1)
    p = m / big
    counts = opp[:, unseen].sum(axis=0)
    stat = ((counts - n * p) ** 2).sum() / (n * p * (1 - p) * big / (big - 1))
    assert stat < _chi2_critical(big - 1), stat
    # the next stock card: one uniform draw among the unseen cards per world
    first = worlds.deck[np.arange(n), worlds.stock_next.astype(np.int64)]
    counts = np.bincount(first, minlength=52)[unseen]
    assert counts.sum() == n
    stat = ((counts - n / big) ** 2 / (n / big)).sum()
    assert stat < _chi2_critical(big - 1), stat


def test_the_opponent_prior_lowers_its_deadwood_and_keeps_known_cards() -> None:
    obs = _midgame_observation()
    known = obs[OBS_FIELDS["opp_taken"]] > 0.5
    uniform = determinize(obs[None], 2000, np.random.default_rng(1))
    prior = determinize(obs[None], 2000, np.random.default_rng(1), opponent_draws=6)
    assert prior.hands[:, 1, known].all()
    assert melds.hand_deadwood(prior.hands[:, 1]).mean() < melds.hand_deadwood(uniform.hands[:, 1]).mean() - 15
    # the stock order stays uniform: the next stock card is any unseen card alike
    seen = (obs[OBS_FIELDS["own_hand"]] + obs[OBS_FIELDS["discard_top"]] + obs[OBS_FIELDS["pile_buried"]]) > 0.5
    unseen = ~seen & ~known
    first = prior.deck[np.arange(2000), prior.stock_next.astype(np.int64)]
    held = prior.hands[:, 1][:, unseen].mean(axis=0)  # how often each unseen card is in its hand
    in_stock_first = np.bincount(first, minlength=52)[unseen] / 2000
    np.testing.assert_allclose(in_stock_first, (1 - held) / (1 - held).sum(), atol=0.02)


def test_row_seeds_make_a_rows_worlds_independent_of_the_batch() -> None:
    obs = np.stack([o[0] for o, *_ in _positions(Rules(), "hand", seed=2, games=8, steps=30)][-3:])
    seeds = np.array([5, 6, 7], np.uint64)
    alone = determinize(obs[1:2], 4, None, row_seeds=seeds[1:2])
    batch = determinize(obs, 4, None, row_seeds=seeds)
    np.testing.assert_array_equal(batch.deck[4:8], alone.deck)
    np.testing.assert_array_equal(batch.hands[4:8], alone.hands)
    other = determinize(obs[1:2], 4, None, row_seeds=np.array([9], np.uint64))
    assert not np.array_equal(other.deck, alone.deck)


def test_bad_observations_are_refused() -> None:
    game = VectorGame(1, seed=0)
    game.reset()
    rng = np.random.default_rng(0)
    mover = int(game.state.current_player[0])
    with pytest.raises(ValueError, match="observation row 0: determinize needs the observation of the player to move"):
        determinize(game.observe(1 - mover), 2, rng)
    obs = game.observe(mover)
    with pytest.raises(ValueError, match="does not match episode='game'"):
        determinize(obs, 2, rng, episode="game")
    broken = obs.copy()
    broken[0, OBS_FIELDS["stock_size"]] = 0.5
    with pytest.raises(ValueError, match="stock_size does not match"):
        determinize(broken, 2, rng)
    with pytest.raises(ValueError, match="worlds must be an integer >= 1"):
        determinize(obs, 0, rng)
    with pytest.raises(ValueError, match="rng must be a numpy Generator"):
        determinize(obs, 2, None)
