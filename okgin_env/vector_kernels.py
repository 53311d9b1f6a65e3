"""Fused kernels of the vector env's rounds (``okgin_env.vector``): a round of moves with its
bookkeeping in one call, and the views of the games that changed in another.

The env steps the learner's N moves, then lets the opponent play round after round until the
learner is to move everywhere. With one core ``step`` per round, Python's per-call work (new
output arrays, copies, fancy indexing, one numpy call per booking) cost more than the moves
themselves; here a round is two kernel calls and the opponent's call. Each game's view is
written once, where it is read: the learner's into the env's (N, OBS_SIZE) observation row, the
opponent's straight into the packed rows it receives.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core import (MASK_ONLY, F_HAND_OVER, F_TERMINATED, F_TRUNCATED, OUT_FLAGS, OUT_REWARDS, RES_BOOLS,
                   RES_INTS, RI_GAME_WINNER, RI_WINNER, ST_CURRENT_PLAYER, _observe_split, _transition)

# log = (count (N,) int32, net (N,) float64, ints (N, R) int32, bools (N, B) bool): a HandLog's arrays
LOG_COUNT, LOG_NET, LOG_INTS, LOG_BOOLS = range(4)


@njit(cache=True)
def first_illegal_packed(idx, acts, mask):
    """Index j of the first ``acts[j]`` that is out of range or not legal in game ``idx[j]``, or -1."""
    for j in range(idx.shape[0]):
        a = acts[j]
        if a < 0 or a >= mask.shape[1] or not mask[idx[j], a]:
            return j
    return -1


@njit(cache=True)
def illegal_rows(actions, mask, illegal):
    """illegal[i] = actions[i] is out of range or not legal in game i; returns how many are."""
    count = 0
    for i in range(actions.shape[0]):
        a = actions[i]
        bad = a < 0 or a >= mask.shape[1] or not mask[i, a]
        illegal[i] = bad
        count += bad
    return count


@njit(cache=True)
def advance(idx, acts, actions, move, rp, st, res, out, seat, fresh, points, scale, game_episode,
            reward, pending, step_log, reset_log, changed):
    """Play ``acts[j]`` in game ``idx[j]`` (legal: checked before) and book every hand that ends.

    ``actions``/``move``/``res``/``out`` are the env's scratch buffers (cleared again here). For each
    ended hand the learner (``seat``) earns its net points times ``scale`` (``points``) or +-1/0
    by the winner of the hand or game: into ``reward`` and ``step_log``, or for a ``fresh`` episode
    (not yet seen by the learner) into ``pending`` and ``reset_log``. Moved games are marked
    ``changed`` (their views are written by ``views``). Returns (games needing a new deal,
    episodes over), as the core's step.
    """
    flags, rewards = out[OUT_FLAGS], out[OUT_REWARDS]
    flags[:] = False
    for j in range(idx.shape[0]):
        actions[idx[j]] = acts[j]
        move[idx[j]] = True
    deals, over = _transition(actions, move, rp, st, res, out)
    r_int, r_bool = res[RES_INTS], res[RES_BOOLS]
    for j in range(idx.shape[0]):
        i = idx[j]
        move[i] = False
        changed[i] = True
        if not flags[F_HAND_OVER, i]:
            continue
        s = seat[i]
        net = np.float64(rewards[i, s])
        if points:
            r = net * scale
        else:
            w = r_int[i, RI_GAME_WINNER] if game_episode else r_int[i, RI_WINNER]
            r = 0.0 if w < 0 else (1.0 if w == s else -1.0)
        log = reset_log if fresh[i] else step_log
        if fresh[i]:
            pending[i] += r
        else:
            reward[i] += r
        log[LOG_COUNT][i] += 1
        log[LOG_NET][i] += net
        log[LOG_INTS][i, :] = r_int[i]
        log[LOG_BOOLS][i, :] = r_bool[i]
        r_int[i, :] = -1  # the scratch result row is blank again for the next hand
        r_bool[i, :] = False
        rewards[i, 0] = rewards[i, 1] = 0.0
    return deals, over


@njit(cache=True)
def clear_log(count, net, ints, bools):
    """Blank a hand log's rows that hold hands (the others are blank already)."""
    for i in range(count.shape[0]):
        if count[i]:
            count[i] = 0
            net[i] = 0.0
            ints[i, :] = -1
            bools[i, :] = False


@njit(cache=True)
def merge_logs(rows_b, a, b, out):
    """Hand logs (count, net, ints, bools): ``out`` gets ``b``'s rows where ``rows_b``, ``a``'s elsewhere."""
    for i in range(rows_b.shape[0]):
        src = b if rows_b[i] else a
        out[LOG_COUNT][i] = src[LOG_COUNT][i]
        out[LOG_NET][i] = src[LOG_NET][i]
        for c in range(out[LOG_INTS].shape[1]):
            out[LOG_INTS][i, c] = src[LOG_INTS][i, c]
        for c in range(out[LOG_BOOLS].shape[1]):
            out[LOG_BOOLS][i, c] = src[LOG_BOOLS][i, c]


@njit(cache=True)
def views(changed, seat, rp, st, obs, mask, opp_obs, opp_mask, opp_idx, opp_observes):
    """Write the view of every ``changed`` game (then unmark it): the learner's (where ``seat`` is
    to move) into ``obs[i]`` and ``mask[i]``; the opponent's into the next packed row of
    ``opp_obs``/``opp_mask`` (game index in ``opp_idx``, in game order; its mask also into
    ``mask[i]``, the core's). Without ``opp_observes`` the opponent's rows get masks only (no
    observation is computed; ``opp_obs`` is not written). Finished games get none. Returns
    how many games the opponent is to move in."""
    current_player = st[ST_CURRENT_PLAYER]
    n = changed.shape[0]
    rows = np.empty(n, np.int64)
    split = np.empty(n, np.int64)  # -1: the learner's row; else the opponent's packed row
    k = m = 0
    for i in range(n):
        if not changed[i]:
            continue
        changed[i] = False
        p = current_player[i]
        if p < 0:
            continue
        rows[m] = i
        if p == seat[i]:
            split[m] = -1
        else:
            split[m] = k if opp_observes else MASK_ONLY
            opp_idx[k] = i
            k += 1
        m += 1
    # one pass in game order: two passes over interleaved rows cost a third more
    _observe_split(rows[:m], current_player, False, True, rp, st, obs, mask, split[:m], opp_obs)
    for j in range(k):
        i = opp_idx[j]
        for a in range(mask.shape[1]):
            opp_mask[j, a] = mask[i, a]
    return k


@njit(cache=True)
def close_episodes(st, rp, flags, illegal, seat, fresh, changed, done, terminated, truncated, ended_idx, real_idx,
                   skip, final_obs):
    """Find the episodes to deal again: game i's is over (or, with ``illegal`` not empty, its
    learner acted illegally). Their games go to ``ended_idx`` and are marked ``changed`` and
    ``fresh``. Those the learner played (not ``fresh`` before) go to ``real_idx``: marked ``done``,
    with ``terminated``/``truncated`` from the last move's ``flags`` (an illegal action
    terminates), and the learner's (``seat``) view of the end packed into ``final_obs``; the
    others, new episodes that ended before the learner's first decision, are marked ``skip``.
    Returns (ended, real, skipped) counts."""
    current_player = st[ST_CURRENT_PLAYER]
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
            done[i] = True
            terminated[i] = flags[F_TERMINATED, i] or bad
            truncated[i] = flags[F_TRUNCATED, i]
        fresh[i] = True
    players = np.empty(n_real, np.int64)
    for j in range(n_real):
        players[j] = seat[real_idx[j]]
    _observe_split(real_idx[:n_real], players, True, False, rp, st, final_obs, np.empty((1, 1), np.bool_), None,
                   final_obs)
    return n_ended, n_real, n_skip


@njit(cache=True)
def opponent_move(idx, acts, actions, move, rp, st, res, out, seat, fresh, points, scale, game_episode, reward,
                  pending, step_log, reset_log, changed, obs, mask, opp_obs, opp_mask, opp_idx, opp_observes):
    """One opponent round in one call: check ``acts`` (legal in games ``idx``), ``advance``, then,
    when no episode ended and no hand is to be dealt, the ``views`` of the games that changed.
    Returns (index of the first illegal action or -1, deals, episodes over, games the opponent is
    to move in next, or -1 when the views are left to the caller)."""
    bad = first_illegal_packed(idx, acts, mask)
    if bad >= 0:
        return bad, 0, 0, -1
    deals, over = advance(idx, acts, actions, move, rp, st, res, out, seat, fresh, points, scale, game_episode,
                          reward, pending, step_log, reset_log, changed)
    if deals > 0 or over > 0:
        return -1, deals, over, -1
    return -1, deals, over, views(changed, seat, rp, st, obs, mask, opp_obs, opp_mask, opp_idx, opp_observes)
