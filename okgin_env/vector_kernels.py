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

from .core import (F_HAND_OVER, F_TERMINATED, F_TRUNCATED, MASK_ONLY, OUT_FLAGS, OUT_REWARDS, RES_BOOLS, RES_INTS,
                   RI_GAME_WINNER, RI_WINNER, ST_CURRENT_PLAYER, _observe_split, _transition, check_indices)

# The kernels take the core's tuples as the core's kernels do (rp, st, res, out: ``VectorGame.rule_params``,
# ``state.arrays()``, ``HandResult.arrays()``, ``VectorGame.step_buffers()``) and the env's arrays as the
# tuples below, and read every field by its index constant (checked at import), never by position.

# A hand log (``vector.HandLog.arrays()``): count (N,) int32 hands ended in the step, net (N,) float64
# the learner's net points over them, ints (N, R) int32 and bools (N, B) bool the last one's result row
_LOG_FIELDS = ("count", "net", "ints", "bools")
LOG_COUNT, LOG_NET, LOG_INTS, LOG_BOOLS = range(4)
check_indices(globals(), "LOG_", _LOG_FIELDS)

# The env's per-game arrays, allocated once and never rebound (``OkginVectorEnv`` builds the tuple once):
# seat (N,) int8 the learner's seat; pending (N,) float64 reward of hands the opponent ended before the
# learner's first decision; changed (N,) bool games whose views are to be written; actions (N,) int64 and
# move (N,) bool the core's step scratch (blank between calls); mask (N, 107) bool the core's legal-action
# masks (``VectorGame.mask_buffer``); step_log, reset_log hand logs (LOG_*); opp_idx (N,) int64 the game of
# each of the opponent's packed rows; ended_idx, real_idx (N,) int64 and skip (N,) bool what
# ``close_episodes`` found.
_ENV_FIELDS = ("seat", "pending", "changed", "actions", "move", "mask", "step_log", "reset_log", "opp_idx",
               "ended_idx", "real_idx", "skip")
(EV_SEAT, EV_PENDING, EV_CHANGED, EV_ACTIONS, EV_MOVE, EV_MASK, EV_STEP_LOG, EV_RESET_LOG, EV_OPP_IDX, EV_ENDED_IDX,
 EV_REAL_IDX, EV_SKIP) = range(12)
check_indices(globals(), "EV_", _ENV_FIELDS)

# How the learner is rewarded (fixed for the env): points (bool) its net points times scale (float), else
# +-1/0 by the winner of the hand, or of the game where game_episode (bool)
_REWARD_FIELDS = ("points", "scale", "game_episode")
RW_POINTS, RW_SCALE, RW_GAME_EPISODE = range(3)
check_indices(globals(), "RW_", _REWARD_FIELDS)

# One step's arrays (new each step): reward (N,) float64 the learner's; fresh (N,) bool games whose new
# episode the learner has not seen yet; obs (N, OBS_SIZE) float32 the learner's views
_STEP_FIELDS = ("reward", "fresh", "obs")
SP_REWARD, SP_FRESH, SP_OBS = range(3)
check_indices(globals(), "SP_", _STEP_FIELDS)

# The opponent's packed views of the next round (new each round, it may keep them): obs (N, OBS_SIZE)
# float32, mask (N, 107) bool; row j is game env[EV_OPP_IDX][j]
_OPP_FIELDS = ("obs", "mask")
OP_OBS, OP_MASK = range(2)
check_indices(globals(), "OP_", _OPP_FIELDS)

E_DONE, E_TERMINATED, E_TRUNCATED = range(3)  #: rows of the (3, N) bool ``ends`` that ``close_episodes`` writes


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
def advance(idx, acts, rp, st, res, out, env, rw, step):
    """Play ``acts[j]`` in game ``idx[j]`` (legal: checked before) and book every hand that ends.

    The core's step scratch (env's actions, move; ``res``, ``out``) is blank again on return. For
    each ended hand the learner (env's seat) earns its net points times the scale or +-1/0 by the
    winner of the hand or game (``rw``): into the step's reward and the env's step_log, or for a
    fresh episode (not yet seen by the learner) into the env's pending and reset_log. Moved games
    are marked changed (their views are written by ``views``). Returns (games needing a new deal,
    episodes over), as the core's step.
    """
    actions, move, changed, seat = env[EV_ACTIONS], env[EV_MOVE], env[EV_CHANGED], env[EV_SEAT]
    pending, step_log, reset_log = env[EV_PENDING], env[EV_STEP_LOG], env[EV_RESET_LOG]
    reward, fresh = step[SP_REWARD], step[SP_FRESH]
    points, scale, game_episode = rw[RW_POINTS], rw[RW_SCALE], rw[RW_GAME_EPISODE]
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
def clear_log(log):
    """Blank a hand log's rows that hold hands (the others are blank already)."""
    count, net, ints, bools = log[LOG_COUNT], log[LOG_NET], log[LOG_INTS], log[LOG_BOOLS]
    for i in range(count.shape[0]):
        if count[i]:
            count[i] = 0
            net[i] = 0.0
            ints[i, :] = -1
            bools[i, :] = False


@njit(cache=True)
def merge_logs(rows_b, a, b, out):
    """Hand logs (LOG_*): ``out`` gets ``b``'s rows where ``rows_b``, ``a``'s elsewhere."""
    for i in range(rows_b.shape[0]):
        src = b if rows_b[i] else a
        out[LOG_COUNT][i] = src[LOG_COUNT][i]
        out[LOG_NET][i] = src[LOG_NET][i]
        for c in range(out[LOG_INTS].shape[1]):
            out[LOG_INTS][i, c] = src[LOG_INTS][i, c]
        for c in range(out[LOG_BOOLS].shape[1]):
            out[LOG_BOOLS][i, c] = src[LOG_BOOLS][i, c]


@njit(cache=True)
def views(rp, st, env, step, opp, opp_observes):
    """Write the view of every changed game (env's changed; then unmark it): the learner's (where
    the env's seat is to move) into the step's obs[i] and the env's mask[i]; the opponent's into
    the next packed row of ``opp`` (obs, mask; its game into the env's opp_idx, in game order; its
    mask also into mask[i], the core's). Without ``opp_observes`` the opponent's rows get masks
    only (no observation is computed; opp's obs is not written). Finished games get none.
    Returns how many games the opponent is to move in."""
    changed, seat, mask, opp_idx = env[EV_CHANGED], env[EV_SEAT], env[EV_MASK], env[EV_OPP_IDX]
    opp_obs, opp_mask = opp[OP_OBS], opp[OP_MASK]
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
    _observe_split(rows[:m], current_player, False, True, rp, st, step[SP_OBS], mask, split[:m], opp_obs)
    for j in range(k):
        i = opp_idx[j]
        for a in range(mask.shape[1]):
            opp_mask[j, a] = mask[i, a]
    return k


@njit(cache=True)
def close_episodes(rp, st, out, env, step, illegal, ends, final_obs):
    """Find the episodes to deal again: game i's is over (or, with ``illegal`` not empty, its
    learner acted illegally). Their games go to the env's ended_idx and are marked changed and
    (the step's) fresh. Those the learner played (not fresh before) go to the env's real_idx:
    marked done in ``ends`` ((3, N) bool, rows E_*), with terminated/truncated from the last
    move's flags (``out[OUT_FLAGS]``; an illegal action terminates), and the learner's (env's
    seat) view of the end packed into ``final_obs``; the others, new episodes that ended before
    the learner's first decision, are marked in the env's skip. Returns (ended, real, skipped)
    counts."""
    seat, changed, skip = env[EV_SEAT], env[EV_CHANGED], env[EV_SKIP]
    ended_idx, real_idx = env[EV_ENDED_IDX], env[EV_REAL_IDX]
    fresh, flags = step[SP_FRESH], out[OUT_FLAGS]
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
            ends[E_DONE, i] = True
            ends[E_TERMINATED, i] = flags[F_TERMINATED, i] or bad
            ends[E_TRUNCATED, i] = flags[F_TRUNCATED, i]
        fresh[i] = True
    players = np.empty(n_real, np.int64)
    for j in range(n_real):
        players[j] = seat[real_idx[j]]
    _observe_split(real_idx[:n_real], players, True, False, rp, st, final_obs, np.empty((1, 1), np.bool_), None,
                   final_obs)
    return n_ended, n_real, n_skip


@njit(cache=True)
def opponent_move(idx, acts, rp, st, res, out, env, rw, step, opp, opp_observes):
    """One opponent round in one call: check ``acts`` (legal in games ``idx``), ``advance``, then,
    when no episode ended and no hand is to be dealt, the ``views`` of the games that changed.
    Returns (index of the first illegal action or -1, deals, episodes over, games the opponent is
    to move in next, or -1 when the views are left to the caller)."""
    bad = first_illegal_packed(idx, acts, env[EV_MASK])
    if bad >= 0:
        return bad, 0, 0, -1
    deals, over = advance(idx, acts, rp, st, res, out, env, rw, step)
    if deals > 0 or over > 0:
        return -1, deals, over, -1
    return -1, deals, over, views(rp, st, env, step, opp, opp_observes)
