"""The rules of ``docs/RULES.md`` as numba kernels over the named records of ``okgin_env.records``.

``deal`` starts hands, ``transition`` applies one move per game (and books the hands that end),
``observe`` writes views and legal-action masks. They are shared by ``VectorGame``
(``okgin_env.core``) and the vector env's fused rounds (``okgin_env.vector_kernels``). Every kernel
reads fields by name: ``state.stock_next``, ``rules.knock_limit``, ``result.winner``,
``out.hand_over``. The ``*_kernel`` functions are the entries called from Python: they take the
records as plain tuples (``records.plain``) and name them again (see ``okgin_env.records``).

Helpers run once per game and step carry ``inline="always"``: a call that is not inlined
passes every array of a record and counts a reference to each, which costs as much as a move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from . import melds as _melds
from .actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from .cards import NUM_CARDS, NUM_RANKS
from .constants import (GAME_BONUS, LINE_BONUS, MAX_KNOCK_LIMIT, PH_DISCARD, PH_DRAW, PH_FORCED_DRAW, PH_OFFER_DEALER,
                        PH_OFFER_NONDEALER, PH_OVER, STOCK_START, UPCARD_POS, WALL)
from .observation import (CANNOT_DISCARD, DEADWOOD_SCALE, DISCARD_DEADWOOD, DISCARD_TOP, IS_DEALER, KNOCK_LIMIT,
                          OBS_FIELDS, OPP_DECLINED, OPP_DISCARDED, OPP_TAKEN, OWN_HAND, PHASE, PILE_BURIED, SCORES,
                          STOCK_SCALE, STOCK_SIZE)
from .records import MASK_ONLY, ObserveRequest, Views, blank_result_row, named_core
from .rules import LOSER_DEALS, WINNER_DEALS

# The meld tables the kernels use, read as globals (numba freezes them as constants).
_RUN_DW, _RUN_MELDED, _RANK_POINTS = _melds.RUN_DEADWOOD, _melds.RUN_MELDED, _melds.RANK_POINTS
# ``observe`` writes these observation fields whole; every other field it zeroes, then sets a few
# entries ((offset, size) pairs, derived so that a new field is zeroed too).
_WHOLE_FIELDS = ("own_hand", "opp_taken", "opp_discarded", "opp_declined", "stock_size", "is_dealer")
_SPARSE_FIELDS = tuple((sl.start, sl.stop - sl.start) for f, sl in OBS_FIELDS.items() if f not in _WHOLE_FIELDS)


class MeldScratch(NamedTuple):
    """Work arrays of the meld kernels, allocated once per kernel call."""

    mine: np.ndarray  #: (4,) int64 suit masks of a hand (the knocker's, the observer's)
    other: np.ndarray  #: (4,) int64 suit masks of the defender's hand
    cand: np.ndarray  #: (4,) int64 the meld search's work
    tmp: np.ndarray  #: (4,) int64 the meld search's work
    pair: np.ndarray  #: (2,) int64 the showdown's (knocker's, defender's) deadwood
    per_card: np.ndarray  #: (52,) int64 deadwood after discarding each card


@njit(cache=True)
def meld_scratch():
    return MeldScratch(np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64),
                       np.empty(2, np.int64), np.empty(NUM_CARDS, np.int64))


# ------------------------------------------------------------------------------------ deal

@njit(cache=True)
def deal_kernel(idx, decks, dealers, core, new_episode):
    """Deal a new hand in games idx[j] from decks[j] with dealers[j]; ``new_episode``: also clear
    the scores, the hands won and the ended flags (a new episode, not the next hand of a game)."""
    c = named_core(core)
    st, out = c.state, c.out
    for j in range(idx.shape[0]):
        i = idx[j]
        if new_episode:
            for q in range(2):
                st.scores[i, q] = 0
                st.hands_won[i, q] = 0
            out.ended_terminated[i] = out.ended_truncated[i] = False
        _deal_row(i, decks[j], dealers[j], c.rules, st)


@njit(cache=True, inline="always")
def _deal_row(i, deck, d, rules, st):
    for c in range(NUM_CARDS):
        st.deck[i, c] = deck[c]
        for p in range(2):
            st.hands[i, p, c] = False
            st.taken[i, p, c] = False
            st.discarded[i, p, c] = False
            st.declined[i, p, c] = False
    for k in range(UPCARD_POS):  # alternately, non-dealer first
        st.hands[i, (1 - d) if k % 2 == 0 else d, deck[k]] = True
    up = deck[UPCARD_POS]
    st.pile[i, 0] = up
    st.pile_size[i] = 1
    st.stock_next[i] = STOCK_START
    st.dealer[i] = d
    st.current_player[i] = 1 - d
    st.phase[i] = PH_OFFER_NONDEALER
    st.taken_card[i] = -1
    st.turns[i] = 0
    st.done[i] = False
    rank = up % NUM_RANKS
    st.knock_limit[i] = rules.knock_limit if rules.knock_limit >= 0 else \
        (0 if rank == 0 else min(rank + 1, MAX_KNOCK_LIMIT))


# ------------------------------------------------------------------------------ one move

@njit(cache=True)
def step_kernel(actions, move, core, views, every_row, autoreset):
    """``transition``, then, when no game is to be dealt (a new hand, or with ``autoreset`` a new
    episode), the mover's view of every game (``every_row``) or of the games that moved or are
    over, into ``views`` (obs by game, mask) in the same call: returns (deals, over, observed).
    Otherwise the caller deals and observes (one kernel call less per step matters when N is
    small: a call costs microseconds)."""
    c = named_core(core)
    views = Views(*views)
    deals, over = transition(actions, move, c)
    out = c.out
    if deals > 0 or (over > 0 and autoreset):
        return deals, over, False
    n = actions.shape[0]
    games = np.empty(n, np.int64)
    players = np.empty(n, np.int64)
    k = 0
    for i in range(n):
        games[k] = i
        players[k] = c.state.current_player[i]
        k += every_row or move[i] or out.terminated[i] or out.truncated[i]
    ask = ObserveRequest(games[:k], players[:k], games[:k], np.zeros(0, np.bool_), True)
    observe(c.rules, c.state, ask, views, views)
    return deals, over, True


@njit(cache=True)
def transition(actions, move, c):
    """The rules of one step on the ``Core`` c: apply actions[i] in every unfinished game with
    move[i] (legal: checked by the caller), book ended hands into ``c.result`` and ``c.out``
    (rewards, flags, next_dealer) and keep the ended flags; no observation. Finished games repeat
    how their episode ended. Returns (games needing a new deal, games whose episode is over)."""
    st, out = c.state, c.out
    s = meld_scratch()
    clear_outputs(c.result, out)
    for i in range(actions.shape[0]):
        if st.done[i] or not move[i]:  # the ended flags are all False while the episode runs
            out.terminated[i] = out.ended_terminated[i]
            out.truncated[i] = out.ended_truncated[i]
            continue
        a = actions[i]
        if a == TAKE_DISCARD:
            _take_discard(i, st)
        elif a == PASS:
            _pass(i, st)
        elif a == DRAW_STOCK:
            _draw(i, st)
        else:
            _discard_or_knock(i, a, c, s)
    deals = over = 0
    for i in range(actions.shape[0]):
        deals += out.need_deal[i]
        if out.terminated[i] or out.truncated[i]:
            out.ended_terminated[i] = out.terminated[i]
            out.ended_truncated[i] = out.truncated[i]
            over += 1
    return deals, over


@njit(cache=True)
def clear_outputs(result, out):
    """Blank the outputs of the last step: rewards and flags zero, the result rows of the hands
    that ended blank (the ended flags stay: they are the games' own)."""
    for i in range(out.hand_over.shape[0]):
        if out.hand_over[i]:
            blank_result_row(result, i)
        out.rewards[i, 0] = out.rewards[i, 1] = 0.0
        out.terminated[i] = out.truncated[i] = out.hand_over[i] = out.need_deal[i] = False


@njit(cache=True)
def clear_outputs_kernel(core):
    """``clear_outputs`` called from Python (``VectorGame.reset``)."""
    c = named_core(core)
    clear_outputs(c.result, c.out)


@njit(cache=True, inline="always")
def _take_discard(i, st):
    p = st.current_player[i]
    top = st.pile[i, st.pile_size[i] - 1]
    st.pile_size[i] -= 1
    st.hands[i, p, top] = True
    st.taken[i, p, top] = True
    st.taken_card[i] = top
    st.phase[i] = PH_DISCARD


@njit(cache=True, inline="always")
def _pass(i, st):
    p = st.current_player[i]
    st.declined[i, p, st.pile[i, 0]] = True
    st.phase[i] = PH_OFFER_DEALER if st.phase[i] == PH_OFFER_NONDEALER else PH_FORCED_DRAW
    st.current_player[i] = 1 - p


@njit(cache=True, inline="always")
def _draw(i, st):
    p = st.current_player[i]
    if st.phase[i] == PH_DRAW:  # drawing instead of taking the top discard declines it
        st.declined[i, p, st.pile[i, st.pile_size[i] - 1]] = True
    card = st.deck[i, st.stock_next[i]]
    st.stock_next[i] += 1
    st.hands[i, p, card] = True
    st.taken_card[i] = -1
    st.phase[i] = PH_DISCARD


@njit(cache=True, inline="always")
def _discard_or_knock(i, a, c, s):
    st = c.state
    p = st.current_player[i]
    knock = a >= KNOCK
    card = a - KNOCK if knock else a
    st.hands[i, p, card] = False
    st.taken[i, p, card] = False
    st.taken_card[i] = -1
    st.turns[i] += 1
    if knock:
        _showdown(i, p, card, c, s)
        return
    st.pile[i, st.pile_size[i]] = card
    st.pile_size[i] += 1
    st.discarded[i, p, card] = True
    wall = NUM_CARDS - st.stock_next[i] <= WALL
    cap = (not wall) and st.turns[i] >= c.rules.max_turns_per_hand
    if not (wall or cap):
        st.current_player[i] = 1 - p
        st.phase[i] = PH_DRAW
        return
    _void_hand(i, cap, c, s)


@njit(cache=True)
def _void_hand(i, cap, c, s):
    """The wall or the turn cap ended the hand: report both players' own deadwood."""
    st, r = c.state, c.result
    c.out.hand_over[i] = True
    r.void[i] = True
    r.truncated_hand[i] = cap
    for q in range(2):
        _melds.masks_of_row(st.hands[i, q], s.mine)
        r.deadwood[i, q] = _melds.min_deadwood_of_masks(s.mine, _RUN_DW, s.cand, s.tmp)
        for cc in range(NUM_CARDS):
            r.hands[i, q, cc] = st.hands[i, q, cc]
    r.upcard[i] = st.deck[i, UPCARD_POS]
    r.dealer[i] = st.dealer[i]
    _end_hand(i, -1, 0, True, cap, c)


@njit(cache=True)
def _showdown(i, p, card, c, s):
    """Player p knocked with ``card`` face down: lay out, lay off, score (docs/RULES.md, Showdown)."""
    st, r, rules = c.state, c.result, c.rules
    _melds.masks_of_row(st.hands[i, p], s.mine)
    _melds.masks_of_row(st.hands[i, 1 - p], s.other)
    _melds.showdown_of_masks(s.mine, s.other, _RUN_DW, _RUN_MELDED, _RANK_POINTS, r.meld_id[i], r.laid_off[i],
                             s.pair)
    k_dw, d_dw = s.pair[0], s.pair[1]
    up = st.deck[i, UPCARD_POS]
    if k_dw == 0:
        winner, pts = p, d_dw + rules.gin_bonus
        r.gin[i] = True
    elif k_dw < d_dw:
        winner, pts = p, d_dw - k_dw
    else:
        winner, pts = 1 - p, k_dw - d_dw + rules.undercut_bonus
        r.undercut[i] = True
    if rules.spade_double and up // NUM_RANKS == 0:
        pts *= 2
        r.spade_doubled[i] = True
    c.out.hand_over[i] = True
    r.knocker[i] = p
    r.knock_card[i] = card
    r.deadwood[i, p] = k_dw
    r.deadwood[i, 1 - p] = d_dw
    r.upcard[i] = up
    r.dealer[i] = st.dealer[i]
    for q in range(2):
        for cc in range(NUM_CARDS):
            r.hands[i, q, cc] = st.hands[i, q, cc]
    _end_hand(i, winner, pts, False, False, c)


@njit(cache=True)
def _end_hand(i, winner, pts, void, cap, c):
    """Book a finished hand: scores, rewards, episode end or the next deal."""
    st, r, out, rules = c.state, c.result, c.out, c.rules
    before0, before1 = st.scores[i, 0], st.scores[i, 1]
    game_over = False
    r.points[i, 0] = 0
    r.points[i, 1] = 0
    if not void:
        r.winner[i] = winner
        r.points[i, winner] = pts
        st.scores[i, winner] += pts
        st.hands_won[i, winner] += 1
        if rules.game_episode and st.scores[i, winner] >= rules.target_score:
            game_over = True
            _end_game(i, winner, c)
    gain0 = st.scores[i, 0] - before0
    gain1 = st.scores[i, 1] - before1
    out.rewards[i, 0] = gain0 - gain1
    out.rewards[i, 1] = gain1 - gain0
    r.scores[i, 0] = st.scores[i, 0]
    r.scores[i, 1] = st.scores[i, 1]
    if rules.game_episode and not game_over:
        out.need_deal[i] = True
        if void:
            out.next_dealer[i] = st.dealer[i]
        elif rules.next_dealer == WINNER_DEALS:
            out.next_dealer[i] = winner
        elif rules.next_dealer == LOSER_DEALS:
            out.next_dealer[i] = 1 - winner
        else:
            out.next_dealer[i] = 1 - st.dealer[i]
    else:
        st.done[i] = True
        st.current_player[i] = -1
        st.phase[i] = PH_OVER
        if cap and not rules.game_episode:
            out.truncated[i] = True
        else:
            out.terminated[i] = True


@njit(cache=True, inline="always")
def _end_game(i, winner, c):
    """A game episode is won: game bonuses (``game_bonuses``) and the result's game fields."""
    st = c.state
    loser = 1 - winner
    if c.rules.game_bonuses:
        st.scores[i, winner] += LINE_BONUS * st.hands_won[i, winner] + GAME_BONUS
        st.scores[i, loser] += LINE_BONUS * st.hands_won[i, loser]
        if st.hands_won[i, loser] == 0:
            st.scores[i, winner] *= 2
    c.result.game_over[i] = True
    c.result.game_winner[i] = winner


# ------------------------------------------------------------------------------ observe

@njit(cache=True)
def observe_kernel(core, request, views, second):
    """``observe`` called from Python: the records as plain tuples."""
    c = named_core(core)
    observe(c.rules, c.state, ObserveRequest(*request), Views(*views), Views(*second))


@njit(cache=True)
def observe(rules, state, ask, views, second):
    """The views and masks that ``ask`` (an ``ObserveRequest``) asks for, into ``views`` (or
    ``second`` for the rows it marks): one pass over the rows in the order given, for views that
    go to two arrays.

    Each float of a row is written once (the card fields copied whole, the sparse ones zeroed
    then set): at N=4096 the observations are 7 MB a step, more than a small L2 holds.
    """
    s = meld_scratch()
    for j in range(ask.games.shape[0]):
        i = ask.games[j]
        p = ask.players[j]
        view = ask.rows[j] != MASK_ONLY
        if ask.second.shape[0] > 0 and ask.second[j]:
            o = second.obs[ask.rows[j]]
        else:
            o = views.obs[max(ask.rows[j], 0)]
        if ask.masks:
            views.mask[i, :] = False
        if p < 0:
            if view:
                o[:] = 0.0
            continue
        if view:
            _write_table(o, i, p, rules, state)
        if state.done[i] or state.current_player[i] != p:
            continue
        ph = state.phase[i]
        if view:
            o[PHASE + ph] = 1.0
        if ph != PH_DISCARD:
            if ask.masks:
                _draw_phase_mask(views.mask[i], ph)
            continue
        own = state.hands[i, p]
        _melds.masks_of_row(own, s.mine)
        _melds.deadwood_after_discard_held_of_masks(s.mine, _RUN_DW, s.per_card, s.cand, s.tmp)
        blocked = state.taken_card[i] if not rules.discard_taken_card else -1
        if view:
            _write_discard_view(o, own, blocked, s.per_card)
        if ask.masks:
            _write_discard_mask(views.mask[i], own, blocked, state.knock_limit[i], s.per_card)


@njit(cache=True, inline="always")
def _zero(o, start, size):
    for k in range(start, start + size):
        o[k] = 0.0


@njit(cache=True, inline="always")
def _write_table(o, i, p, rules, state):
    """Player p's view of game i, all but the decision's fields (phase, discard deadwood)."""
    q = 1 - p
    for start, cards in ((OWN_HAND, state.hands[i, p]), (OPP_TAKEN, state.taken[i, q]),
                         (OPP_DISCARDED, state.discarded[i, q]), (OPP_DECLINED, state.declined[i, q])):
        for c in range(NUM_CARDS):
            o[start + c] = cards[c]
    for start, size in _SPARSE_FIELDS:
        _zero(o, start, size)
    n = state.pile_size[i]
    if n > 0:
        o[DISCARD_TOP + state.pile[i, n - 1]] = 1.0
        for k in range(n - 1):
            o[PILE_BURIED + state.pile[i, k]] = 1.0
    o[KNOCK_LIMIT + state.knock_limit[i]] = 1.0
    o[STOCK_SIZE] = (NUM_CARDS - state.stock_next[i]) / STOCK_SCALE
    o[IS_DEALER] = 1.0 if state.dealer[i] == p else 0.0
    if rules.game_episode:
        o[SCORES] = state.scores[i, p] / rules.target_score
        o[SCORES + 1] = state.scores[i, q] / rules.target_score
        o[SCORES + 2] = rules.target_score / 100.0


@njit(cache=True, inline="always")
def _draw_phase_mask(m, ph):
    """The legal actions at an offer or the start of a turn."""
    if ph == PH_OFFER_NONDEALER or ph == PH_OFFER_DEALER:
        m[TAKE_DISCARD] = True
        m[PASS] = True
    elif ph == PH_FORCED_DRAW:
        m[DRAW_STOCK] = True
    else:
        m[DRAW_STOCK] = True
        m[TAKE_DISCARD] = True


@njit(cache=True, inline="always")
def _write_discard_view(o, own, blocked, dw):
    """The discard phase's fields of the view: the card that may not be discarded, and the
    deadwood after each discard (dw[c], for held c) scaled to (0, 1]."""
    if blocked >= 0:
        o[CANNOT_DISCARD + blocked] = 1.0
    for c in range(NUM_CARDS):
        if own[c]:
            o[DISCARD_DEADWOOD + c] = (DEADWOOD_SCALE - dw[c]) / DEADWOOD_SCALE


@njit(cache=True, inline="always")
def _write_discard_mask(m, own, blocked, knock_limit, dw):
    """The legal discards and knocks: held cards but the blocked one; a knock where the other ten
    cards leave deadwood dw[c] <= knock_limit."""
    for c in range(NUM_CARDS):
        if own[c] and c != blocked:
            m[c] = True
            if dw[c] <= knock_limit:
                m[KNOCK + c] = True
