"""Fused kernels of the vector env's rounds (``okgin_env.envs.vector``): a round of moves with its
bookkeeping in one call, and the views of the games that changed in another.

The env steps the learner's N moves, then lets the opponent play round after round until the
learner is to move everywhere. With one core ``step`` per round, Python's per-call work (new
output arrays, copies, fancy indexing, one numpy call per booking) cost more than the moves
themselves; here a round is two kernel calls and the opponent's call. Each game's view is
written once, where it is read: the learner's into the env's (N, OBS_SIZE) observation row, the
opponent's straight into the packed rows it receives.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from okgin_env.envs.reward import RewardRule, hand_reward
from okgin_env.game.jit import kernel
from okgin_env.game.kernels import observe, transition
from okgin_env.game.records import (
    MASK_ONLY,
    HandResult,
    ObserveRequest,
    Views,
    blank_result_row,
    copy_result_row,
    named_core,
)

# The kernels take the game's ``Core`` as the core's kernels do (``VectorGame.kernel_core``) and the
# env's arrays as the records below, all as plain tuples (``records.plain``), named again on entry.


class EndedHandsRecord(NamedTuple):
    """The hands that ended in each game during one step (or reset)."""

    count: np.ndarray  #: (N,) int32 hands ended
    net: np.ndarray  #: (N,) float64 the learner's net points over them
    result: HandResult  #: the last one's result row


class EnvArrays(NamedTuple):
    """The vector env's per-game arrays, allocated once and never rebound."""

    seat: np.ndarray  #: (N,) int8 the learner's seat
    pending: np.ndarray  #: (N,) float64 reward of hands the opponent ended before the learner's first decision
    changed: np.ndarray  #: (N,) bool games whose views are to be written
    actions: np.ndarray  #: (N,) int64 the core's step scratch (blank between calls)
    move: np.ndarray  #: (N,) bool the core's step scratch (blank between calls)
    mask: np.ndarray  #: (N, 107) bool the core's legal-action masks (``VectorGame.mask_buffer``)
    opp_idx: np.ndarray  #: (N,) int64 the game of each of the opponent's packed rows
    ended_idx: np.ndarray  #: (N,) int64 games whose episode ended (``close_episodes``)
    real_idx: np.ndarray  #: (N,) int64 ... of those, the episodes the learner played
    skip: np.ndarray  #: (N,) bool ... the others, new episodes that ended before the learner's first decision


class Booking(NamedTuple):
    """How the hands that end are booked for the learner: its reward rule and the hand logs (only
    the kernels that move games take it: each array of a record costs its call a little)."""

    rule: RewardRule
    step_log: EndedHandsRecord  #: hands that ended in the learner's episodes this step
    reset_log: EndedHandsRecord  #: hands that ended in fresh episodes (before the learner's first decision)


class LearnerStep(NamedTuple):
    """One step's arrays (new each step)."""

    reward: np.ndarray  #: (N,) float64 the learner's
    fresh: np.ndarray  #: (N,) bool games whose new episode the learner has not seen yet
    obs: np.ndarray  #: (N, OBS_SIZE) float32 the learner's views


class Ends(NamedTuple):
    """The episodes the learner played that ended in a step (``close_episodes``)."""

    done: np.ndarray  #: (N,) bool
    terminated: np.ndarray  #: (N,) bool
    truncated: np.ndarray  #: (N,) bool


@kernel(inline="always")
def _named_log(log):
    g = EndedHandsRecord(*log)
    return EndedHandsRecord(g.count, g.net, HandResult(*g.result))


@kernel(inline="always")
def named_booking(book):
    """The ``Booking`` of its plain tuple, the reward rule and the hand logs named too."""
    b = Booking(*book)
    return Booking(RewardRule(*b.rule), _named_log(b.step_log), _named_log(b.reset_log))


@kernel
def first_illegal_packed(idx, acts, mask):
    """Index j of the first ``acts[j]`` that is out of range or not legal in game ``idx[j]``, or -1."""
    for j in range(idx.shape[0]):
        a = acts[j]
        if a < 0 or a >= mask.shape[1] or not mask[idx[j], a]:
            return j
    return -1


@kernel
def illegal_rows(actions, mask, illegal):
    """illegal[i] = actions[i] is out of range or not legal in game i; returns how many are."""
    count = 0
    for i in range(actions.shape[0]):
        a = actions[i]
        bad = a < 0 or a >= mask.shape[1] or not mask[i, a]
        illegal[i] = bad
        count += bad
    return count


@kernel
def advance_kernel(idx, acts, core, env, book, step):
    """``advance`` called from Python: the records as plain tuples."""
    return advance(idx, acts, named_core(core), EnvArrays(*env), named_booking(book), LearnerStep(*step))


@kernel
def advance(idx, acts, c, env, book, step):
    """Play ``acts[j]`` in game ``idx[j]`` (legal: checked before) and book every hand that ends.

    The env's actions and move are blank again on return. For each ended hand the learner (env's
    seat) earns its net points times the scale or +-1/0 by the winner of the hand or game
    (``book.rule``): into the step's reward and ``book.step_log``, or for a fresh episode (not yet
    seen by the learner) into the env's pending and ``book.reset_log``. Moved games are marked changed (their
    views are written by ``views``). Returns (games needing a new deal, episodes over), as the
    core's step.
    """
    actions, move, changed, hand_over = env.actions, env.move, env.changed, c.out.hand_over  # bound once (records.py)
    for j in range(idx.shape[0]):
        actions[idx[j]] = acts[j]
        move[idx[j]] = True
    deals, over = transition(actions, move, c)
    for j in range(idx.shape[0]):
        i = idx[j]
        move[i] = False
        changed[i] = True
        if hand_over[i]:
            _book_hand(i, c, env, book, step)
    return deals, over


@kernel(inline="always")
def _book_hand(i, c, env, book, step):
    """The learner's reward and the hand log of a hand that ended in game i."""
    s = env.seat[i]
    net = np.float64(c.out.rewards[i, s])
    r = hand_reward(book.rule, net, c.result.winner[i], c.result.game_winner[i], s)
    log = book.reset_log if step.fresh[i] else book.step_log
    if step.fresh[i]:
        env.pending[i] += r
    else:
        step.reward[i] += r
    log.count[i] += 1
    log.net[i] += net
    copy_result_row(c.result, i, log.result, i)


@kernel
def clear_named_log(log):
    """Blank a named ``EndedHandsRecord``'s rows that hold hands (the others are blank already)."""
    count, net, result = log.count, log.net, log.result
    for i in range(count.shape[0]):
        if count[i]:
            count[i] = 0
            net[i] = 0.0
            blank_result_row(result, i)


@kernel
def merge_logs(rows_b, a, b, out):
    """Hand logs: ``out`` gets ``b``'s rows where ``rows_b``, ``a``'s elsewhere."""
    _merge_logs(rows_b, _named_log(a), _named_log(b), _named_log(out))


@kernel
def _merge_logs(rows_b, a, b, out):
    for i in range(rows_b.shape[0]):
        src = b if rows_b[i] else a
        out.count[i] = src.count[i]
        out.net[i] = src.net[i]
        copy_result_row(src.result, i, out.result, i)


@kernel
def views_kernel(core, env, step, opp, opp_observes):
    """``views`` called from Python: the records as plain tuples."""
    return views(named_core(core), EnvArrays(*env), LearnerStep(*step), Views(*opp), opp_observes)


@kernel
def views(c, env, step, opp, opp_observes):
    """Write the view of every changed game (env's changed; then unmark it): the learner's (where
    the env's seat is to move) into the step's obs[i] and the env's mask[i]; the opponent's into
    the next packed row of ``opp`` (obs, mask; its game into the env's opp_idx, in game order; its
    mask also into mask[i], the core's). Without ``opp_observes`` the opponent's rows get masks
    only (no observation is computed; opp's obs is not written). Finished games get none.
    Returns how many games the opponent is to move in."""
    current_player, changed, seat, opp_idx, mask = c.state.current_player, env.changed, env.seat, env.opp_idx, env.mask
    n = changed.shape[0]
    games = np.empty(n, np.int64)
    players = np.empty(n, np.int64)
    rows = np.empty(n, np.int64)
    second = np.zeros(n, np.bool_)  # the opponent's packed rows
    k = m = 0
    for i in range(n):
        if not changed[i]:
            continue
        changed[i] = False
        p = current_player[i]
        if p < 0:
            continue
        games[m] = i
        players[m] = p
        if p == seat[i]:
            rows[m] = i
        else:
            rows[m] = k if opp_observes else MASK_ONLY
            second[m] = opp_observes
            opp_idx[k] = i
            k += 1
        m += 1
    # one pass in game order: two passes over interleaved rows cost a third more
    ask = ObserveRequest(games[:m], players[:m], rows[:m], second[:m], True)
    observe(c.rules, c.state, ask, Views(step.obs, mask), opp)
    opp_mask = opp.mask
    for j in range(k):
        i = opp_idx[j]
        for a in range(mask.shape[1]):
            opp_mask[j, a] = mask[i, a]
    return k


@kernel
def close_episodes(core, env, step, illegal, ends, final_obs):
    """``_close_episodes`` called from Python: the records as plain tuples. (Every kernel that loops
    takes its records as arguments: a record built inside a function makes its loops slower,
    4x for this one's at N=1024.)"""
    return _close_episodes(named_core(core), EnvArrays(*env), LearnerStep(*step), illegal, Ends(*ends), final_obs)


@kernel
def _close_episodes(c, env, step, illegal, ends, final_obs):
    """Find the episodes to deal again: game i's is over (or, with ``illegal`` not empty, its
    learner acted illegally). Their games go to the env's ended_idx and are marked changed and
    (the step's) fresh. Those the learner played (not fresh before) go to the env's real_idx:
    marked done in ``ends`` (an ``Ends``), with terminated/truncated from the last move's flags
    (an illegal action terminates), and the learner's (env's seat) view of the end packed into
    ``final_obs``; the others, new episodes that ended before the learner's first decision, are
    marked in the env's skip. Returns (ended, real, skipped) counts."""
    current_player, terminated, truncated, fresh = c.state.current_player, c.out.terminated, c.out.truncated, step.fresh
    skip, changed, ended_idx, real_idx, seat = env.skip, env.changed, env.ended_idx, env.real_idx, env.seat
    n_ended = n_real = n_skip = 0
    for i in range(current_player.shape[0]):
        bad = illegal.shape[0] > 0 and illegal[i]
        skip[i] = False
        if current_player[i] >= 0 and not bad:
            continue
        ended_idx[n_ended] = i
        n_ended += 1
        changed[i] = True
        if fresh[i]:
            skip[i] = True
            n_skip += 1
        else:
            real_idx[n_real] = i
            n_real += 1
            ends.done[i] = True
            ends.terminated[i] = terminated[i] or bad
            ends.truncated[i] = truncated[i]
        fresh[i] = True
    players = np.empty(n_real, np.int64)
    for j in range(n_real):
        players[j] = seat[real_idx[j]]
    games = real_idx[:n_real]
    ask = ObserveRequest(games, players, np.arange(n_real), np.zeros(0, np.bool_), False)
    final = Views(final_obs, env.mask)
    observe(c.rules, c.state, ask, final, final)
    return n_ended, n_real, n_skip


@kernel
def opponent_move(idx, acts, core, env, book, step, opp, opp_observes):
    """One opponent round in one call: check ``acts`` (legal in games ``idx``), ``advance``, then,
    when no episode ended and no hand is to be dealt, the ``views`` of the games that changed.
    Returns (index of the first illegal action or -1, deals, episodes over, games the opponent is
    to move in next, or -1 when the views are left to the caller)."""
    c, env, step, opp = named_core(core), EnvArrays(*env), LearnerStep(*step), Views(*opp)
    bad = first_illegal_packed(idx, acts, env.mask)
    if bad >= 0:
        return bad, 0, 0, -1
    deals, over = advance(idx, acts, c, env, named_booking(book), step)
    if deals > 0 or over > 0:
        return -1, deals, over, -1
    return -1, deals, over, views(c, env, step, opp, opp_observes)
