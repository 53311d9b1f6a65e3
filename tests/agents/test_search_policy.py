"""A search that follows a PPO policy (``search:K:PATH``, ``SearchAgent(policy=...)``; docs/search.md)."""

from __future__ import annotations

import numpy as np
import okgin_agents as agents
import pytest
import torch
from okgin_agents.ppo import ActorCritic, load_ppo_agent
from okgin_agents.search import SearchAgent


@pytest.fixture
def policy_path(tmp_path, write_checkpoint) -> str:
    torch.manual_seed(0)
    return write_checkpoint(tmp_path / "p.pt", ActorCritic(hidden_sizes=[16], shared_trunk=False, mask_input=True))


def test_a_search_that_never_switches_plays_its_policy_and_otherwise_its_candidates(policy_path, expert_positions):
    obs, mask = expert_positions
    policy = load_ppo_agent(policy_path)
    assert (SearchAgent(worlds=2, seed=0, policy=policy, margin=1e9).act(obs, mask)
            == policy.act(obs, mask)).all()
    bold = SearchAgent(worlds=2, seed=0, policy=policy, margin=0.0)
    cand = bold._candidates(obs, mask)
    assert (cand[:, 0] == policy.act(obs, mask)).all()
    assert ((cand == agents.make("expert").act(obs, mask)[:, None]).any(axis=1)).all()
    chosen = bold.act(obs, mask)
    assert mask[np.arange(len(obs)), chosen].all() and (cand == chosen[:, None]).any(axis=1).all()


def test_in_rollouts_the_searcher_follows_its_policy_and_the_expert_plays_the_opponent(policy_path, expert_positions):
    obs, mask = expert_positions
    policy = load_ppo_agent(policy_path)
    search = SearchAgent(worlds=2, seed=0, policy=policy)
    player = np.arange(len(obs)) % 2
    act = search._rollout_actions(obs, mask, np.zeros(len(obs), np.uint64), 1, player)
    expert = agents.make("expert").act(obs, mask)
    assert (act == np.where(player == 0, policy.act(obs, mask), expert)).all()
    assert (act != expert).any()  # the test can tell the two apart
    simple = SearchAgent(worlds=2, seed=0, policy=policy, rollout="simple")  # the rollout bot plays the opponent
    act = simple._rollout_actions(obs, mask, np.arange(len(obs), dtype=np.uint64), 1, player)
    both = simple._bot_actions(obs, mask, np.arange(len(obs), dtype=np.uint64), 1)
    assert (act == np.where(player == 0, policy.act(obs, mask), both)).all()


def test_spec_and_errors(policy_path):
    assert agents.make(f"search:3:{policy_path}").policy is not None
    assert agents.make("search:3").policy is None
    with pytest.raises(ValueError, match="integer K"):
        agents.make(f"search:x:{policy_path}")
    with pytest.raises(ValueError, match="needs a PPO checkpoint path"):  # a trailing colon is a typo
        agents.make("search:3:")
    with pytest.raises(FileNotFoundError, match="not found"):
        agents.make("search:3:missing.pt")
    with pytest.raises(ValueError, match="action_probs"):
        SearchAgent(policy=agents.make("expert"))
