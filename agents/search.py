"""The search bot: determinized Monte Carlo rollouts on the batched core.

For every row of a batch and every candidate action, ``act`` samples K worlds consistent with
the observation (``okgin_env.features.determinize``), applies the action in each and plays the hand to
its end with the expert bot for both players; it then plays the candidate with the best mean
result (its points minus the opponent's for the hand, gin and undercut bonuses included).

* **One batch.** The worlds of all rows, candidates and samples are one ``VectorGame`` (split
  only above ``max_batch`` worlds, to bound memory); finished worlds are dropped from the batch
  as it shrinks.
* **Common worlds.** The K worlds of a row are shared by its candidates, so candidates are
  compared on the same opponent hands and stock orders (common random numbers).
* **Opponent prior.** Uniform worlds deal the opponent a random hand (about 50 deadwood), far
  worse than what an opponent that has been drawing and discarding holds; rollouts in such
  worlds misjudge knocks, undercuts and discards. With ``prior=True`` (the default) the worlds
  give the opponent the best ten of a few extra unseen cards (``opponent_draws``).
* **Candidates** (pruning, to spend the worlds where they matter): in a draw decision the legal
  actions (take / draw or pass); in a discard decision the expert's choice, the ``top``
  discards leaving the least deadwood (ties: most points) and the knock with the least
  deadwood. When the expert goes gin, or only one candidate is left, no search is done.
* **Conservative.** The expert's choice is played unless another candidate beats it by more
  than ``margin`` standard errors of the paired difference over the worlds; the noise of a
  small K then costs little.
* **More worlds where they matter.** Most decisions are clear after K worlds: the expert's
  choice leads. Where an alternative leads it by more than ``close`` standard errors (about a
  fifth of the decisions), ``extra`` more worlds (default 5K) are rolled out for that row, and the
  choice is made on all of them; the budget of K = 20 everywhere buys K = 10 here and 60 worlds
  on the close decisions.
* **Stateless and row-independent.** The randomness of a row (worlds and the rollout bot's tie
  breaks) is a hash of the agent's seed, the row's observation, the world and the ply, so an
  action depends on the seed and that row alone: not on the batch around it, nor on earlier
  calls, nor on anything the observation does not show.

The rules are those given to the agent (``Rules()`` by default; ``okgin_agents.make(spec, rules=...)`` and
``okgin_agents.for_rules`` give it the rules of the games it plays, as evaluate.py and play.py do).
Game episodes are searched as such (target score from the observation), the value still being
the hand's points. ``rollout="simple"`` rolls out with the simple bot instead (about ten times
faster, a much worse model of the opponent).

**Following a policy.** With ``policy=`` (an agent with ``action_probs``, e.g. a PPO agent; spec
``search:K:PATH``) the searcher improves on that policy instead of on the expert: its choice is
the default (column 0), the candidates are its ``top`` most probable actions and the expert's
choice, and it plays the searcher's own moves in the rollouts (the rollout bot, the expert by
default, still models the opponent). It was the teacher of the expert-iteration experiment
(``experiments/distill``).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from okgin_env.agent_specs import Agent
from okgin_env.features.determinize import determinize, splitmix64, unit_float
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import CARD_POINTS, NUM_CARDS
from okgin_env.game.core import VectorGame
from okgin_env.game.jit import kernel
from okgin_env.game.observation import DISCARD_DEADWOOD, SCORES, STOCK_SCALE, STOCK_SIZE
from okgin_env.game.rules import Rules

from . import choices as k
from .base import Bot, check_batch
from .expert import ExpertAgent
from .simple import simple_actions

DEFAULT_WORLDS = 10  #: first-pass worlds per candidate action (``search`` = ``search:10``)
EXTRA_FACTOR = 5  #: a decision where an alternative leads gets EXTRA_FACTOR * K more worlds (``extra``)
CLOSE = 0.75  #: ... when the alternative leads the expert's choice by more than CLOSE standard errors
ROLLOUTS = ("simple", "expert")
_POINTS = CARD_POINTS.astype(np.int64)


@dataclasses.dataclass(frozen=True)
class SearchSettings:
    """How the search looks ahead (every field is also a keyword of ``SearchAgent``; module docstring)."""

    worlds: int = DEFAULT_WORLDS  #: first-pass worlds per candidate action, 1..4096
    rollout: str = "expert"  #: the bot that plays the worlds out (``ROLLOUTS``)
    top: int = 3  #: candidate actions compared (the prior's or the expert's best)
    margin: float = 2.0  #: points per hand an alternative must lead the default choice by
    prior: bool = True
    max_batch: int = 1 << 15  #: rollout games at once (larger searches go in chunks)
    extra: int | None = None  #: extra worlds where an alternative leads; None: EXTRA_FACTOR * worlds
    close: float = CLOSE  #: ... when it leads by more than this many standard errors

    def checked(self) -> SearchSettings:
        """These settings with ``extra`` resolved; a one-line ValueError naming a bad value and what is allowed."""
        worlds, extra = self.worlds, self.extra
        if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or not 1 <= worlds <= 4096:
            raise ValueError(f"search worlds K must be an integer 1..4096, got {worlds!r}")
        if self.rollout not in ROLLOUTS:
            raise ValueError(f"rollout must be one of {', '.join(ROLLOUTS)}, got {self.rollout!r}")
        if isinstance(self.top, bool) or not isinstance(self.top, (int, np.integer)) or self.top < 1:
            raise ValueError(f"top must be an integer >= 1, got {self.top!r}")
        if not self.margin >= 0:
            raise ValueError(f"margin must be >= 0, got {self.margin!r}")
        if extra is None:
            extra = EXTRA_FACTOR * worlds
        if isinstance(extra, bool) or not isinstance(extra, (int, np.integer)) or not 0 <= extra <= 4096 * EXTRA_FACTOR:
            raise ValueError(f"extra worlds must be an integer 0..{4096 * EXTRA_FACTOR}, got {extra!r}")
        return dataclasses.replace(self, extra=extra)


class SearchAgent(Bot):
    """Determinized Monte Carlo search over the expert's candidate actions (module docstring)."""

    name = "search"

    def __init__(self, seed: int | None = None, rules: Rules | None = None, policy: Agent | None = None,
                 settings: SearchSettings | None = None, **options) -> None:
        """``settings`` and ``options`` (``SearchSettings`` fields, e.g. ``worlds=4``, which win over
        ``settings``) say how it searches; ``policy`` (a PPO agent) is followed in the rollouts if given."""
        unknown = sorted(set(options) - {f.name for f in dataclasses.fields(SearchSettings)})
        if unknown:
            raise TypeError(f"SearchAgent got unknown option(s) {', '.join(unknown)}; allowed: "
                            f"{', '.join(f.name for f in dataclasses.fields(SearchSettings))}")
        c = dataclasses.replace(settings or SearchSettings(), **options).checked()
        self.worlds, self.rollout, self.top, self.margin = int(c.worlds), c.rollout, int(c.top), float(c.margin)
        self.extra, self.close = int(c.extra), float(c.close)
        self.prior = bool(c.prior)
        self.max_batch = max(int(c.max_batch), self.worlds)
        self.rules = Rules() if rules is None else rules
        self.seed = np.uint64(np.random.SeedSequence(seed).generate_state(1, np.uint64)[0])
        self.expert = ExpertAgent()
        if policy is not None and not callable(getattr(policy, "action_probs", None)):
            raise ValueError(f"policy must be an agent with action_probs(obs, mask) (a PPO agent), got {policy!r}")
        self.policy = policy

    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        return self.search(observations, action_masks)[0]

    def search(self, observations: np.ndarray, action_masks: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(choices, candidates, values): what ``act`` plays, the (B, width) candidate actions of each
        row (-1 padded; column 0 the default choice) and their mean rollout values (NaN where a row
        was not searched or has fewer candidates)."""
        obs, mask = check_batch(observations, action_masks)
        cand = self._candidates(obs, mask)
        out = cand[:, 0].copy()
        values = np.full(cand.shape, np.nan)
        search = (cand >= 0).sum(axis=1) > 1
        targets = np.rint(obs[:, SCORES + 2] * 100).astype(np.int64)  # 0 in hand episodes
        for target in np.unique(targets[search]):
            rows = np.flatnonzero(search & (targets == target))
            rules = self.rules if target == 0 else dataclasses.replace(self.rules, target_score=int(target))
            worlds = (cand[rows] >= 0).sum(axis=1) * max(self.worlds, self.extra)
            chunk = (np.cumsum(worlds) - 1) // self.max_batch  # one batch unless it would pass max_batch
            for c in np.unique(chunk):
                part = rows[chunk == c]
                out[part], values[part] = self._search(obs[part], cand[part], rules, "game" if target else "hand")
        return out, cand, values

    def _candidates(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(rows, width) actions to compare, -1 padded; column 0 is the default choice."""
        expert = self.expert.act(obs, mask)
        if self.policy is None:
            cand = np.full((len(obs), self.top + 2), -1, np.int64)
            _candidates_kernel(obs, mask, expert, _POINTS, cand)
            return cand
        probs = np.where(mask, self.policy.action_probs(obs, mask), -1.0)
        top = np.argsort(-probs, axis=1, kind="stable")[:, :self.top]  # most probable first
        top = np.where(np.take_along_axis(mask, top, 1), top, -1)
        extra = np.where((top == expert[:, None]).any(axis=1), -1, expert)
        cand = np.concatenate([top, extra[:, None]], axis=1)
        order = np.argsort(cand < 0, axis=1, kind="stable")  # -1 padding last
        return np.take_along_axis(cand, order, 1)

    # ------------------------------------------------------------------ the search
    def _search(self, obs: np.ndarray, cand: np.ndarray, rules: Rules, episode: str) -> tuple[np.ndarray, np.ndarray]:
        """Best candidate of each row (cand[:, 0] is the default choice) by the mean rollout value, and
        the candidates' mean values over all the worlds the row got."""
        row_seed = _row_seeds(obs, self.seed)
        draws = opponent_draws(obs) if self.prior else np.zeros(len(obs), np.int64)
        vals = self._values(obs, cand, row_seed, draws, 0, self.worlds, rules, episode)
        best, lead, se = _paired_lead(vals, cand)
        mean = vals.mean(axis=2)
        if self.extra:  # an alternative leads: more worlds before switching (or not)
            close = np.flatnonzero((best > 0) & (lead > self.close * se))
            if len(close):
                more = self._values(obs[close], cand[close], row_seed[close], draws[close], self.worlds, self.extra,
                                    rules, episode)
                both = np.concatenate([vals[close], more], axis=2)
                b, m, e = _paired_lead(both, cand[close])
                best[close], lead[close], se[close] = b, m, e
                mean[close] = both.mean(axis=2)
        # switch from the default choice (column 0) only on a clear paired difference over the same worlds
        switch = lead > self.margin * se
        return np.where(switch, cand[np.arange(len(cand)), best], cand[:, 0]), mean

    def _values(self, obs: np.ndarray, cand: np.ndarray, row_seed: np.ndarray, draws: np.ndarray, start: int,
                count: int, rules: Rules, episode: str) -> np.ndarray:
        """(rows, candidates, count) rollout values of each candidate in worlds start..start+count-1 of
        its row (NaN where a row has fewer candidates); a row's world k is the same in every call."""
        kw = start + count
        worlds = determinize(obs, kw, None, rules=rules, episode=episode, player=0, row_seeds=row_seed,
                             opponent_draws=draws)
        pr, pc = np.nonzero(cand >= 0)  # (row, candidate) pairs
        world_of = (pr[:, None] * kw + np.arange(start, kw)[None, :]).reshape(-1)  # pair-major, then world
        state = worlds.rows(world_of)
        noise_seed = _mix(row_seed[pr].repeat(count), np.tile(np.arange(start, kw, dtype=np.uint64), len(pr)))
        value = self._rollout(state, cand[pr, pc].repeat(count), noise_seed, rules, episode)
        vals = np.full((*cand.shape, count), np.nan)
        vals[pr, pc] = value.reshape(len(pr), count)
        return vals

    def _rollout(self, state, first: np.ndarray, noise_seed: np.ndarray, rules: Rules, episode: str) -> np.ndarray:
        """Value (player 0's points minus player 1's for the hand) of each world after ``first``."""
        def moves(out, alive, finished, ply):
            return self._rollout_actions(out.observation, out.legal_action_mask, noise_seed[alive], ply,
                                         out.current_player)

        pts = play_out(state, first, moves, rules, episode)
        return pts[:, 0] - pts[:, 1]

    def _rollout_actions(self, obs: np.ndarray, mask: np.ndarray, noise_seed: np.ndarray, ply: int,
                         player: np.ndarray) -> np.ndarray:
        """The rollout bot's moves; with a policy, the searcher (player 0 of every world) plays it instead."""
        if self.policy is None:
            return self._bot_actions(obs, mask, noise_seed, ply)
        act = np.empty(len(obs), np.int64)
        me, op = np.flatnonzero(player == 0), np.flatnonzero(player != 0)  # each player only on its own rows
        if len(me):
            act[me] = self.policy.act(obs[me], mask[me])
        if len(op):
            act[op] = self._bot_actions(obs[op], mask[op], noise_seed[op], ply)
        return act

    def _bot_actions(self, obs: np.ndarray, mask: np.ndarray, noise_seed: np.ndarray, ply: int) -> np.ndarray:
        if self.rollout == "expert":
            return self.expert.act(obs, mask)
        act = np.empty(len(obs), np.int64)
        simple_actions(obs, mask, _uniform(noise_seed, ply), act)
        return act


def play_out(state, first: np.ndarray, moves, rules: Rules, episode: str = "hand") -> np.ndarray:
    """(n, 2) each player's points for the hand of each game of ``state``, played out from ``first``
    (one action per game) with ``moves(out, alive, finished, ply)``: the actions of every row of
    the current batch at ply 1, 2, ... (``alive``: each row's game; ``finished``: its hand is
    over). A finished hand episode ignores its action; a game episode deals the next hand, which
    still needs a legal one, and only its first hand counts. All games step as one batch; finished
    ones are dropped from it once they are half of it."""
    game = VectorGame.from_state(state, rules=rules, episode=episode)
    points = np.zeros((game.num_games, 2))
    alive = np.arange(game.num_games)  # game of each row
    finished = np.zeros(game.num_games, bool)  # its hand is over (a game episode deals on: ignored)
    out = game.step(first)
    ply = 0
    while True:
        over = out.hand_over & ~finished
        points[alive[over]] = out.result.points[over]
        finished |= over
        if finished.all():
            return points
        if 2 * finished.sum() >= len(finished):  # drop the finished games from the batch
            keep = np.flatnonzero(~finished)
            state = game.get_state(keep)
            game = VectorGame(len(keep), rules=rules, episode=episode)
            out = game.set_state(state)
            alive, finished = alive[keep], finished[keep]
        ply += 1
        out = game.step(moves(out, alive, finished, ply))


def _paired_lead(vals: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row: the candidate with the best mean value, its mean lead over the default choice
    (column 0) in the same worlds, and the standard error of that paired difference."""
    kw = vals.shape[2]
    mean = np.where(cand >= 0, vals.mean(axis=2), -np.inf)
    best = mean.argmax(axis=1)
    diff = vals[np.arange(len(cand)), best] - vals[:, 0]
    se = diff.std(axis=1, ddof=1) / np.sqrt(kw) if kw > 1 else np.zeros(len(cand))
    return best, diff.mean(axis=1), se


def opponent_draws(obs: np.ndarray) -> np.ndarray:
    """The opponent prior of the worlds (``determinize(opponent_draws=...)``): its hand is as if it had
    kept the best of 2 + 0.3 per card drawn from the stock so far extra cards (at most 8).

    Calibrated on expert self-play: uniform worlds give the opponent about 50 deadwood at any stock
    size, while an expert holds about 30 with 24-29 cards left in the stock, 19 with 18-23 and 14
    with 12-17; this prior gives about 35, 23 and 11.
    """
    stock = np.rint(obs[:, STOCK_SIZE] * STOCK_SCALE).astype(np.int64)
    return np.minimum(8, 2 + np.rint(0.3 * (STOCK_SCALE - stock)).astype(np.int64))


def make_search(arg: str | None, seed: int | None) -> SearchAgent:
    """Factory for the spec ``search[:K[:PATH]]`` (PATH: a PPO checkpoint the searcher follows)."""
    if arg is None:
        return SearchAgent(seed=seed)
    k, colon, path = arg.partition(":")
    try:
        worlds = int(k)
    except ValueError:
        raise ValueError(f"search:K[:PATH] needs an integer K (worlds per action) 1..4096, got {k!r}") from None
    if colon and not path.strip():
        raise ValueError(f"search:K:PATH needs a PPO checkpoint path after 'search:{k}:'")
    if not colon:
        return SearchAgent(seed=seed, worlds=worlds)
    from .ppo import load_ppo_agent  # lazy: torch only when a policy is followed

    return SearchAgent(seed=seed, worlds=worlds, policy=load_ppo_agent(path, seed=seed))


# ------------------------------------------------------------------ kernels

@kernel
def _candidates_kernel(obs, mask, expert, points, cand):
    """cand[b] <- the actions to compare (-1 padded): the expert's first, then, in a discard decision,
    the ``cand.shape[1] - 2`` least-deadwood discards and the least-deadwood knock; in a draw
    decision the legal take / draw / pass. A gin knock by the expert is not questioned."""
    width = cand.shape[1]
    for b in range(obs.shape[0]):
        o, m = obs[b], mask[b]
        cand[b, 0] = expert[b]
        n = 1
        ph = k.row_phase(o)
        if ph == k.DISCARD:
            if expert[b] >= KNOCK and expert[b] < DRAW_STOCK and k.row_after_discard(o, expert[b] - KNOCK) == 0:
                continue  # gin
            best_knock, best_x = -1, -1.0
            for c in range(NUM_CARDS):
                if m[KNOCK + c] and o[DISCARD_DEADWOOD + c] > best_x:
                    best_knock, best_x = KNOCK + c, o[DISCARD_DEADWOOD + c]
            for _ in range(width - 2):  # selection of the best discards, one at a time
                pick, px = -1, -1.0
                for c in range(NUM_CARDS):
                    if not m[c]:
                        continue
                    x = o[DISCARD_DEADWOOD + c] * 1000.0 + points[c]
                    if x > px and not _listed(cand[b], n, c):
                        pick, px = c, x
                if pick < 0:
                    break
                cand[b, n] = pick
                n += 1
            if best_knock >= 0 and not _listed(cand[b], n, best_knock):
                cand[b, n] = best_knock
                n += 1
        elif ph != k.NO_DECISION:
            for a in (TAKE_DISCARD, DRAW_STOCK, PASS):
                if m[a] and not _listed(cand[b], n, a) and n < width:
                    cand[b, n] = a
                    n += 1
        for j in range(n, width):
            cand[b, j] = -1


@kernel(inline="always")
def _listed(row, n, a):
    for j in range(n):
        if row[j] == a:
            return True
    return False


@kernel
def _mix(a, b):
    """Elementwise hash of two uint64 arrays."""
    out = np.empty(a.shape[0], np.uint64)
    for i in range(a.shape[0]):
        out[i] = splitmix64(splitmix64(a[i]) ^ b[i])
    return out


@kernel
def _uniform(seeds, counter):
    """One uniform [0, 1) number per seed for this counter."""
    out = np.empty(seeds.shape[0], np.float64)
    for i in range(seeds.shape[0]):
        out[i] = unit_float(splitmix64(seeds[i] ^ splitmix64(np.uint64(counter))))
    return out


@kernel
def _hash_rows(obs, seed, out):
    """out[b] = hash of the agent's seed and the bits of observation row b."""
    bits = obs.view(np.uint32)
    for b in range(obs.shape[0]):
        h = seed
        for j in range(bits.shape[1]):
            if bits[b, j] != 0:
                h = splitmix64(h ^ (np.uint64(bits[b, j]) << np.uint64(16)) ^ np.uint64(j))
        out[b] = h


def _row_seeds(obs: np.ndarray, seed: np.uint64) -> np.ndarray:
    out = np.empty(len(obs), np.uint64)
    _hash_rows(np.ascontiguousarray(obs, dtype=np.float32), seed, out)
    return out

