"""Writes tests/data/features_v1.npz: observations and the learner features computed from them by
the code of commit 547085e (before the features moved from okgin_agents into okgin_env.features.learner),
and the shipped checkpoint's moves on them. tests/features/test_features.py checks that today's code computes
the same bits. Run from the checkout's root, at that commit: python tests/data/make_features_v1.py"""
import numpy as np
import okgin_agents as agents
from okgin_agents.ppo import load_ppo_agent, network_input

from okgin_env.game.core import VectorGame, random_legal_actions
from okgin_env.game.observation import OBS_FIELDS
from okgin_env.game.rules import Rules


def played(episode, rules, seed, bots, steps):
    game = VectorGame(32, rules=rules, episode=episode, seed=seed, autoreset=True)
    out, seen, masks = game.reset(), [], []
    rng = np.random.default_rng(seed)
    for t in range(steps):
        seen.append(out.observation.copy()); masks.append(out.legal_action_mask.copy())
        p = out.current_player
        a = np.empty(32, np.int64)
        for i, bot in enumerate(bots):
            rows = np.flatnonzero(p == i)
            if len(rows):
                a[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows]) if bot else random_legal_actions(out.legal_action_mask[rows], rng)
        out = game.step(a)
    return np.concatenate(seen), np.concatenate(masks)

exp = agents.make("expert", seed=0)
parts = [played("hand", Rules(), 11, [exp, exp], 50), played("game", Rules(), 12, [exp, None], 120),
         played("hand", Rules(discard_taken_card=True, knock_limit=5), 13, [None, None], 30)]
obs = np.concatenate([p[0] for p in parts]).astype(np.float32)
mask = np.concatenate([p[1] for p in parts])
rng = np.random.default_rng(0)
keep = rng.permutation(len(obs))[:320]
obs, mask = obs[keep], mask[keep]
obs[:6, OBS_FIELDS["phase"]] = 0  # not this player's decision
meld = network_input(obs, "meld")[:, obs.shape[1]:]
outs = network_input(obs, "outs")[:, obs.shape[1] + meld.shape[1]:]
agent = load_ppo_agent("checkpoints/okgin_ppo.pt", seed=0)
act = agent.act(obs[6:], mask[6:])
print(agent.network.features, obs.shape, meld.shape, outs.shape, np.bincount(obs[:, OBS_FIELDS["phase"]].argmax(1)), (obs[:, OBS_FIELDS['scores']].sum(1)>0).sum(), np.bincount(act)[:5])
np.savez_compressed("tests/data/features_v1.npz", obs=obs, mask=mask, meld=meld, outs=outs, ppo_actions=np.concatenate([np.full(6, -1), act]))
