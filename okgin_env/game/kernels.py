"""The rules of ``docs/RULES.md`` as numba kernels over the named records of ``okgin_env.game.records``.

``deal`` starts hands, ``transition`` applies one move per game (and books the hands that end),
``observe`` writes views and legal-action masks. They are shared by ``VectorGame``
(``okgin_env.game.core``) and the vector env's fused rounds (``okgin_env.envs.vector_kernels``). Every kernel
reads fields by name: ``state.stock_next``, ``rules.knock_limit``, ``result.winner``,
``out.hand_over``. The ``*_kernel`` functions are the entries called from Python: they take the
records as plain tuples (``records.plain``) and name them again (see ``okgin_env.game.records``).

Helpers run once per game and step carry ``inline="always"``: a call that is not inlined
passes every array of a record and counts a reference to each, which costs as much as a move.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from okgin_env.game import eaai_showdown as _eaai
from okgin_env.game import melds as _melds
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import NUM_CARDS, NUM_RANKS
from okgin_env.game.constants import (
    GAME_BONUS,
    LINE_BONUS,
    MAX_KNOCK_LIMIT,
    PH_DISCARD,
    PH_DRAW,
    PH_FORCED_DRAW,
    PH_OFFER_DEALER,
    PH_OFFER_NONDEALER,
    PH_OVER,
    STOCK_START,
    UPCARD_POS,
    WALL,
)
from okgin_env.game.jit import kernel
from okgin_env.game.observation import (
    CANNOT_DISCARD,
    DEADWOOD_SCALE,
    DISCARD_DEADWOOD,
    DISCARD_TOP,
    IS_DEALER,
    KNOCK_LIMIT,
    OBS_FIELDS,
    OPP_DECLINED,
    OPP_DISCARDED,
    OPP_TAKEN,
    OWN_HAND,
    PHASE,
    PILE_BURIED,
    SCORES,
    STOCK_SCALE,
    STOCK_SIZE,
)
from okgin_env.game.records import MASK_ONLY, ObserveRequest, Views, blank_result_row, named_core
from okgin_env.game.rules import EAAI_SHOWDOWN, LOSER_DEALS, WINNER_DEALS

# The meld tables the kernels use, read as globals (numba freezes them as constants).
_RUN_DW, _RUN_MELDED, _RANK_POINTS = _melds.RUN_DEADWOOD, _melds.RUN_MELDED, _melds.RANK_POINTS
TURNS_SATURATE = 32767  #: the largest turn count GameState.turns (int16) holds
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


@kernel
def meld_scratch():
    return MeldScratch(np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64),
                       np.empty(2, np.int64), np.empty(NUM_CARDS, np.int64))


# ------------------------------------------------------------------------------------ deal

@kernel
def deal_kernel(idx, decks, dealers, core, new_episode):
    """Deal a new hand in games idx[j] from decks[j] with dealers[j]; ``new_episode``: also clear
    the scores, the hands won and the ended flags (a new episode, not the next hand of a game).
    (Every kernel that loops takes its records as arguments and binds their fields before the
    loop: a record built inside the function, or a field read per game, makes the loop slower.)"""
    _deal(idx, decks, dealers, named_core(core), new_episode)


@kernel
def _deal(idx, decks, dealers, c, new_episode):
    st, out, fixed_limit = c.state, c.out, c.rules.knock_limit
    deck, hands, taken, discarded, declined = st.deck, st.hands, st.taken, st.discarded, st.declined
    pile, pile_size, stock_next, dealer, knock_limit = st.pile, st.pile_size, st.stock_next, st.dealer, st.knock_limit
    current_player, phase, taken_card, turns, done = st.current_player, st.phase, st.taken_card, st.turns, st.done
    scores, hands_won = st.scores, st.hands_won
    ended_terminated, ended_truncated = out.ended_terminated, out.ended_truncated
    for j in range(idx.shape[0]):
        i = idx[j]
        d = dealers[j]
        if new_episode:
            for q in range(2):
                scores[i, q] = 0
                hands_won[i, q] = 0
            ended_terminated[i] = ended_truncated[i] = False
        for k in range(NUM_CARDS):
            deck[i, k] = decks[j, k]
            for p in range(2):
                hands[i, p, k] = taken[i, p, k] = discarded[i, p, k] = declined[i, p, k] = False
        for k in range(UPCARD_POS):  # alternately, non-dealer first
            hands[i, (1 - d) if k % 2 == 0 else d, decks[j, k]] = True
        up = decks[j, UPCARD_POS]
        pile[i, 0] = up
        pile_size[i] = 1
        stock_next[i] = STOCK_START
        dealer[i] = d
        current_player[i] = 1 - d
        phase[i] = PH_OFFER_NONDEALER
        taken_card[i] = -1
        turns[i] = 0
        done[i] = False
        rank = up % NUM_RANKS
        knock_limit[i] = fixed_limit if fixed_limit >= 0 else (0 if rank == 0 else min(rank + 1, MAX_KNOCK_LIMIT))


# ------------------------------------------------------------------------------ one move

@kernel(inline="always")
def step_kernel(actions, move, c, views, every_row, autoreset):
    """``transition``, then, when no game is to be dealt (a new hand, or with ``autoreset`` a new
    episode), the mover's view of every game (``every_row``) or of the games that moved or are
    over, into ``views`` (obs by game, mask) in the same call: returns (deals, over, observed).
    Otherwise the caller deals and observes (one kernel call less per step matters when N is
    small: a call costs microseconds).

    Compiled into its caller (``handle.step_with_ref``), with ``transition`` (``transition_inline``):
    a call that passes the core's ~50 arrays costs about a microsecond (their reference counts),
    as much as a move of one game. Random play through the AEC env, 2026-12-03: ~7-10% more
    decisions/s at N = 1, ~4% at N = 64, the same at N = 1024."""
    deals, over = transition_inline(actions, move, c)
    out = c.out
    if deals > 0 or (over > 0 and autoreset):
        return deals, over, False
    n = actions.shape[0]
    games = np.empty(n, np.int64)
    players = np.empty(n, np.int64)
    current_player, terminated, truncated = c.state.current_player, out.terminated, out.truncated
    k = 0
    for i in range(n):
        games[k] = i
        players[k] = current_player[i]
        k += every_row or move[i] or terminated[i] or truncated[i]
    ask = ObserveRequest(games[:k], players[:k], games[:k], np.zeros(0, np.bool_), True)
    observe(c.rules, c.state, ask, views, views)
    return deals, over, True


@kernel
def transition(actions, move, c):
    """The rules of one step on the ``Core`` c: apply actions[i] in every unfinished game with
    move[i] (legal: checked by the caller), book ended hands into ``c.result`` and ``c.out``
    (rewards, flags, next_dealer) and keep the ended flags; no observation. Finished games repeat
    how their episode ended. Returns (games needing a new deal, games whose episode is over).
    (One loop over the fields bound once: a record's field read per game costs a reference count.)"""
    st, out = c.state, c.out
    hands, taken, declined, discarded = st.hands, st.taken, st.declined, st.discarded
    deck, stock_next, pile, pile_size, turns = st.deck, st.stock_next, st.pile, st.pile_size, st.turns
    done, current_player, phase, taken_card = st.done, st.current_player, st.phase, st.taken_card
    terminated, truncated, need_deal = out.terminated, out.truncated, out.need_deal
    ended_terminated, ended_truncated = out.ended_terminated, out.ended_truncated
    max_turns = c.rules.max_turns_per_hand
    s = meld_scratch()
    clear_outputs(c.result, out)
    for i in range(actions.shape[0]):
        if done[i] or not move[i]:  # the ended flags are all False while the episode runs
            terminated[i] = ended_terminated[i]
            truncated[i] = ended_truncated[i]
            continue
        a = actions[i]
        p = current_player[i]
        ph = phase[i]
        if a == TAKE_DISCARD:
            top = pile[i, pile_size[i] - 1]
            pile_size[i] -= 1
            hands[i, p, top] = taken[i, p, top] = True
            taken_card[i] = top
            phase[i] = PH_DISCARD
        elif a == PASS:
            declined[i, p, pile[i, 0]] = True
            phase[i] = PH_OFFER_DEALER if ph == PH_OFFER_NONDEALER else PH_FORCED_DRAW
            current_player[i] = 1 - p
        elif a == DRAW_STOCK:
            if ph == PH_DRAW:  # drawing instead of taking the top discard declines it
                declined[i, p, pile[i, pile_size[i] - 1]] = True
            card = deck[i, stock_next[i]]
            stock_next[i] += 1
            hands[i, p, card] = True
            taken_card[i] = -1
            phase[i] = PH_DISCARD
        else:  # discard or knock
            knock = a >= KNOCK
            card = a - KNOCK if knock else a
            hands[i, p, card] = taken[i, p, card] = False
            taken_card[i] = -1
            if turns[i] < TURNS_SATURATE:  # without a turn cap (max_turns_per_hand=None) the count stops here
                turns[i] += 1
            if knock:
                _showdown(i, p, card, c, s)
                continue
            pile[i, pile_size[i]] = card
            pile_size[i] += 1
            discarded[i, p, card] = True
            wall = NUM_CARDS - stock_next[i] <= WALL
            cap = (not wall) and turns[i] >= max_turns
            if wall or cap:
                _void_hand(i, cap, c, s)
            else:
                current_player[i] = 1 - p
                phase[i] = PH_DRAW
    deals = over = 0
    for i in range(actions.shape[0]):
        deals += need_deal[i]
        if terminated[i] or truncated[i]:
            ended_terminated[i] = terminated[i]
            ended_truncated[i] = truncated[i]
            over += 1
    return deals, over


#: ``transition`` compiled into its caller's code (numba inlines its IR) instead of called, for
#: ``step_kernel``: the same function, a second compiled form.
transition_inline = kernel(inline="always")(transition.py_func)


@kernel
def clear_outputs(result, out):
    """Blank the outputs of the last step: rewards and flags zero, the result rows of the hands
    that ended blank (the ended flags stay: they are the games' own)."""
    rewards, terminated, truncated, hand_over, need_deal = (out.rewards, out.terminated, out.truncated, out.hand_over,
                                                            out.need_deal)
    for i in range(hand_over.shape[0]):
        if hand_over[i]:
            blank_result_row(result, i)
        rewards[i, 0] = rewards[i, 1] = 0.0
        terminated[i] = truncated[i] = hand_over[i] = need_deal[i] = False


@kernel
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


@kernel(inline="always")
def _bits_of_row(row):
    """A (52,) bool hand as a 52-bit mask."""
    bits = 0
    for cc in range(NUM_CARDS):
        if row[cc]:
            bits |= 1 << cc
    return bits


@kernel
def _showdown(i, p, card, c, s):
    """Player p knocked with ``card`` face down: lay out, lay off, score (docs/RULES.md, Showdown)."""
    st, r, rules = c.state, c.result, c.rules
    if rules.showdown == EAAI_SHOWDOWN:  # each side's declared melds drawn from the deal, greedy lay-offs
        _eaai.eaai_showdown(_bits_of_row(st.hands[i, p]), _bits_of_row(st.hands[i, 1 - p]),
                            _eaai.deal_seed(st.deck[i]), r.meld_id[i], r.laid_off[i], s.pair)
    else:
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


@kernel
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


@kernel(inline="always")
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

@kernel
def observe_kernel(core, request, views, second):
    """``observe`` called from Python: the records as plain tuples."""
    c = named_core(core)
    observe(c.rules, c.state, ObserveRequest(*request), Views(*views), Views(*second))


@kernel
def observe(rules, state, ask, views, second):
    """The views and masks that ``ask`` (an ``ObserveRequest``) asks for, into ``views`` (or
    ``second`` for the rows it marks): one pass over the rows in the order given, for views that
    go to two arrays.

    Each float of a row is written once (the card fields copied whole, the sparse ones zeroed
    then set): at N=4096 the observations are 7 MB a step, more than a small L2 holds. The
    fields are bound once, not read off the records per row: a record's field read in the loop
    costs a reference count each time (three times the row's work at N=1024).
    """
    hands, taken, discarded, declined = state.hands, state.taken, state.discarded, state.declined
    done, current_player, phase = state.done, state.current_player, state.phase
    pile, pile_size, knock_limit, stock_next = state.pile, state.pile_size, state.knock_limit, state.stock_next
    dealer, scores, taken_card = state.dealer, state.scores, state.taken_card
    game_episode, target, blocks_taken = rules.game_episode, rules.target_score, not rules.discard_taken_card
    games, players, rows, second_rows, write_mask = ask.games, ask.players, ask.rows, ask.second, ask.masks
    obs, mask, obs2 = views.obs, views.mask, second.obs
    s = meld_scratch()
    for j in range(games.shape[0]):
        i = games[j]
        p = players[j]
        view = rows[j] != MASK_ONLY
        if second_rows.shape[0] > 0 and second_rows[j]:
            o = obs2[rows[j]]
        else:
            o = obs[max(rows[j], 0)]
        if write_mask:
            mask[i, :] = False
        if p < 0:
            if view:
                o[:] = 0.0
            continue
        q = 1 - p
        own = hands[i, p]
        if view:
            for start, cards in ((OWN_HAND, own), (OPP_TAKEN, taken[i, q]), (OPP_DISCARDED, discarded[i, q]),
                                 (OPP_DECLINED, declined[i, q])):
                for c in range(NUM_CARDS):
                    o[start + c] = cards[c]
            for start, size in _SPARSE_FIELDS:
                _zero(o, start, size)
            n = pile_size[i]
            if n > 0:
                o[DISCARD_TOP + pile[i, n - 1]] = 1.0
                for k in range(n - 1):
                    o[PILE_BURIED + pile[i, k]] = 1.0
            o[KNOCK_LIMIT + knock_limit[i]] = 1.0
            o[STOCK_SIZE] = (NUM_CARDS - stock_next[i]) / STOCK_SCALE
            o[IS_DEALER] = 1.0 if dealer[i] == p else 0.0
            if game_episode:
                o[SCORES] = scores[i, p] / target
                o[SCORES + 1] = scores[i, q] / target
                o[SCORES + 2] = target / 100.0
        if done[i] or current_player[i] != p:
            continue
        ph = phase[i]
        if view:
            o[PHASE + ph] = 1.0
        if ph != PH_DISCARD:
            if write_mask:
                _draw_phase_mask(mask[i], ph)
            continue
        _melds.masks_of_row(own, s.mine)
        _melds.deadwood_after_discard_held_of_masks(s.mine, _RUN_DW, s.per_card, s.cand, s.tmp)
        blocked = taken_card[i] if blocks_taken else -1
        _write_discard(o, mask[i], own, blocked, knock_limit[i], s.per_card, view, write_mask)


@kernel(inline="always")
def _zero(o, start, size):
    for k in range(start, start + size):
        o[k] = 0.0


@kernel(inline="always")
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


@kernel(inline="always")
def _write_discard(o, m, own, blocked, knock_limit, dw, view, write_mask):
    """The discard phase: with ``view``, the card that may not be discarded and the deadwood after
    each discard (dw[c], for held c) scaled to (0, 1] into o; with ``write_mask``, the legal
    discards (held cards but the blocked one) and knocks (where dw[c] <= knock_limit) into m."""
    if blocked >= 0 and view:
        o[CANNOT_DISCARD + blocked] = 1.0
    for c in range(NUM_CARDS):
        if not own[c]:
            continue
        if view:
            o[DISCARD_DEADWOOD + c] = (DEADWOOD_SCALE - dw[c]) / DEADWOOD_SCALE
        if write_mask and c != blocked:
            m[c] = True
            if dw[c] <= knock_limit:
                m[KNOCK + c] = True
