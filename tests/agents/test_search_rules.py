"""The search bot plans under the rules of the games it plays, whichever program makes it."""

from __future__ import annotations

import numpy as np
import okgin_agents as agents
import pytest
from okgin_agents.search import SearchAgent

from okgin_env import Rules, VectorGame

OTHER = Rules(gin_bonus=50, undercut_bonus=25)


def test_for_rules_copies_a_searcher_and_leaves_other_bots_alone() -> None:
    search = agents.make("search:2", seed=0)
    assert search.rules == Rules()
    twin = agents.for_rules(search, OTHER)
    assert twin is not search and twin.rules == OTHER and search.rules == Rules()  # the original is untouched
    assert agents.for_rules(twin, OTHER) is twin  # already under those rules
    simple = agents.make("simple", seed=0)
    assert agents.for_rules(simple, OTHER) is simple  # reads only its observation: nothing to change
    assert agents.make("search:2", seed=0, rules=OTHER).rules == OTHER
    with pytest.raises(TypeError, match="rules must be an okgin_env.Rules"):
        agents.for_rules(search, {"gin_bonus": 50})


def test_the_rules_change_what_the_search_sees() -> None:
    """Rollout values under other bonuses differ: the rules are really simulated, not only stored."""
    game = VectorGame(32, seed=4)
    out = game.reset()
    rng = np.random.default_rng(4)
    for _ in range(30):
        legal = out.legal_action_mask
        out = game.step(np.array([rng.choice(np.flatnonzero(m)) for m in legal]))
    obs, mask = out.observation, out.legal_action_mask
    plain = SearchAgent(seed=1, worlds=4, rollout="simple").search(obs, mask)[2]
    other = SearchAgent(seed=1, worlds=4, rollout="simple", rules=OTHER).search(obs, mask)[2]
    searched = ~np.isnan(plain)
    assert searched.any() and not np.array_equal(plain[searched], other[searched])


def test_evaluate_makes_its_agents_for_its_rules() -> None:
    from okgin import evaluate

    spec = evaluate.parse_spec(["--agents", "search:2", "simple", "--hands", "2", "--rules", "gin_bonus=50",
                                "undercut_bonus=25"])
    players = evaluate.Players(spec)
    assert players.make(0, 0, 0).rules == OTHER
    assert not hasattr(players.make(1, 0, 1), "rules")


def test_the_tables_make_their_bots_for_their_rules() -> None:
    from okgin.human_table import seat_bot

    assert seat_bot("search:2", 0, OTHER).rules == OTHER
    assert seat_bot("search:2", 0).rules == Rules()
