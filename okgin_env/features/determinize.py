"""Determinization: full game states consistent with what one player knows.

``determinize(observations, worlds, rng)`` turns each observation of the player to move into
``worlds`` complete ``GameState`` rows. Restored with ``VectorGame.set_state`` (or
``VectorGame.from_state``), every world gives back exactly the observation it came from
(``VectorGame.observe(player)`` equals the input row) and the same legal-action mask, so a
search can play the worlds out on the batched core.

What is sampled, uniformly
    The *unseen* cards are those not in the player's hand, not in the discard pile and not
    known to be in the opponent's hand (``opp_taken``: cards it took from the pile and still
    holds). The opponent's hand is ``opp_taken`` plus a uniformly random subset of the unseen
    cards; the rest of the unseen cards form the stock in uniformly random order. (The true
    posterior is not uniform -- the opponent's choices say something about its hand -- but the
    observation alone defines no other distribution; see ``docs/search.md``.) The optional
    ``opponent_draws`` prior replaces the uniform hand by the best ten of a few more unseen cards.

What the observation does not tell, and the value chosen
    Each choice below leaves the player's observation, the legal actions, the stock and both
    hands as given; it can only change what the *opponent* would observe later or what a
    finished hand reports, never the cards anyone can draw or the scoring of the hand:

    * order of the buried pile cards: ascending card index under the top card. Buried cards
      never come back into play (taking the top card must be followed by a discard on top of
      the card below); the order only decides which buried card the taker sees as
      ``discard_top`` during its discard decision.
    * upcard (``deck[20]``): the top card during the offer (then it is known); later the bottom
      card of the chosen pile, or, if the pile is empty, the card just taken. The knock limit is
      kept from the observation. ``deck[20]`` matters only under ``spade_double`` and in the
      reported ``HandResult.upcard``; it is a function of the observation alone, so every
      world of one observation doubles or does not double alike and a comparison of actions
      across its worlds is unaffected.
    * order of the dealt cards (``deck[:20]`` and the rest of ``deck[:stock_next]``): read only
      when the hand is dealt.
    * ``turns``: a lower bound (completed stock draws plus the pile takes the observation
      shows). It matters only for ``max_turns_per_hand``; the world may reach the cap later
      than the true game (never with the default cap of 200 in practice).
    * the player's own public history, which the player's observation does not show but the
      opponent's does: ``taken[player]`` = held cards the opponent had discarded (the player
      must have taken them) plus the card taken this turn; ``discarded[player]`` = cards in the
      pile or in ``opp_taken`` that the opponent did not discard; ``declined[player]`` = the
      upcard in the forced draw (the player passed on it), otherwise empty. These feed only the
      opponent's observation (an opponent model in a rollout).
    * ``taken_card`` where ``discard_taken_card`` is allowed (``cannot_discard`` is empty then):
      -1; the rule ignores it.
    * game episodes: ``scores`` from the observation (shares of the target), ``hands_won`` 1 for
      a player with a positive score, else 0; hands won count only in ``game_bonuses`` at game
      end, never in a hand's points.

Vectorised: the random order comes from one ``argsort`` of a (B * worlds, 52) random array,
the states are written by one numba kernel; no Python loop over worlds or cards.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from okgin_env.game import melds as _melds
from okgin_env.game.cards import HAND_SIZE, NUM_CARDS
from okgin_env.game.constants import (
    FULL_STOCK,
    NUM_DECISION_PHASES,
    NUM_KNOCK_LIMITS,
    PH_DISCARD,
    PH_DRAW,
    PH_FORCED_DRAW,
    PH_OFFER_NONDEALER,
    UPCARD_POS,
)
from okgin_env.game.core import EPISODES
from okgin_env.game.jit import kernel
from okgin_env.game.kernels import meld_scratch
from okgin_env.game.observation import (
    CANNOT_DISCARD,
    DISCARD_TOP,
    IS_DEALER,
    KNOCK_LIMIT,
    OBS_SIZE,
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
from okgin_env.game.records import GameState, plain
from okgin_env.game.rules import RuleParams, Rules, rule_params

_RUN_DW = _melds.RUN_DEADWOOD  # read as a global by the kernel (numba freezes it), as the core's kernels do


def observation_episode(observations: np.ndarray) -> np.ndarray:
    """(B,) bool: rows from game episodes (their ``scores`` field carries the target, > 0)."""
    return np.asarray(observations)[:, SCORES + 2] > 0


def _check_observations(obs: np.ndarray, rules: Rules, episode: str) -> None:
    """One-line ValueError for the first row that is not a decision of the player to move."""
    def bad(what: str, rows: np.ndarray) -> None:
        if rows.any():
            raise ValueError(f"observation row {int(np.flatnonzero(rows)[0])}: {what}")

    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE or len(obs) < 1:
        raise ValueError(f"observations must have shape (B, {OBS_SIZE}) with B >= 1, got {obs.shape}")
    cards = lambda off: obs[:, off:off + NUM_CARDS] > 0.5  # noqa: E731 - a 52-card field as bools
    phase = obs[:, PHASE:PHASE + NUM_DECISION_PHASES] > 0.5
    bad("determinize needs the observation of the player to move (its phase one-hot is empty)",
        phase.sum(axis=1) != 1)
    discard = phase[:, PH_DISCARD]
    hand, taken = cards(OWN_HAND).sum(axis=1), cards(OPP_TAKEN).sum(axis=1)
    bad("own_hand must hold 10 cards (11 in the discard phase)", hand != HAND_SIZE + discard)
    top = cards(DISCARD_TOP).sum(axis=1)
    bad("discard_top must be one card (or none, in the discard phase after taking the upcard)",
        (top > 1) | ((top == 0) & ~discard))
    known = cards(OWN_HAND) | cards(DISCARD_TOP) | cards(PILE_BURIED) | cards(OPP_TAKEN)
    bad("own_hand, discard_top, pile_buried and opp_taken overlap",
        known.sum(axis=1) != hand + top + cards(PILE_BURIED).sum(axis=1) + taken)
    stock = np.rint(obs[:, STOCK_SIZE] * STOCK_SCALE).astype(np.int64)
    unseen = NUM_CARDS - known.sum(axis=1)
    bad("stock_size does not match the unseen cards left after the opponent's hand",
        (taken > HAND_SIZE) | (unseen - (HAND_SIZE - taken) != stock))
    bad("knock_limit must be one-hot", (obs[:, KNOCK_LIMIT:KNOCK_LIMIT + NUM_KNOCK_LIMITS] > 0.5).sum(axis=1) != 1)
    game = observation_episode(obs)
    bad(f"the observation's episode does not match episode={episode!r}", game != (episode == "game"))
    if episode == "game":
        bad(f"the observation's target score does not match rules.target_score ({rules.target_score})",
            np.rint(obs[:, SCORES + 2] * 100) != rules.target_score)


def determinize(observations: np.ndarray, worlds: int, rng: np.random.Generator | None, rules: Rules | None = None,
                episode: str | None = None, player: int = 0, row_seeds: np.ndarray | None = None,
                opponent_draws: int | np.ndarray = 0) -> GameState:
    """``worlds`` sampled full states for each observation (B, OBS_SIZE) of the player to move.

    Row ``b * worlds + k`` of the result is world ``k`` of observation ``b``; the observing
    player gets id ``player`` (0 or 1). ``rules`` (default ``Rules()``) and ``episode``
    ("hand" or "game"; default: read from the observation's scores field) are those of the
    game; they set what the state must satisfy (``check_state``). See the module docstring
    for what is sampled and what is chosen.

    The randomness comes from ``rng``, or, when ``row_seeds`` ((B,) uint64) is given, from a
    hash of each row's seed, the world and the card, so that a row's worlds do not depend on
    the other rows of the batch (``rng`` may then be None).

    ``opponent_draws`` (an int or one per row, default 0 = the uniform split) is an optional
    prior that the opponent played to lower its deadwood: its hand is then drawn as ``d`` extra
    unseen cards on top of the uniform ones, and the ``d`` cards whose removal leaves the least
    deadwood (never a card known to be there) are dropped back into the stock, whose order
    stays uniform. The worlds reproduce the observation either way.
    """
    obs = np.ascontiguousarray(observations, dtype=np.float32)
    if obs.ndim == 1:
        obs = obs[None]
    rules = Rules() if rules is None else rules
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be an okgin_env.Rules, got {type(rules).__name__}")
    if episode is None:
        episode = "game" if obs.ndim == 2 and obs.shape[-1] == OBS_SIZE and observation_episode(obs[:1])[0] else "hand"
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(EPISODES)}, got {episode!r}")
    if isinstance(worlds, bool) or not isinstance(worlds, (int, np.integer)) or worlds < 1:
        raise ValueError(f"worlds must be an integer >= 1, got {worlds!r}")
    if player not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    _check_observations(obs, rules, episode)
    n = len(obs) * int(worlds)
    if row_seeds is None:
        if not isinstance(rng, np.random.Generator):
            raise ValueError(f"rng must be a numpy Generator (or give row_seeds), got {type(rng).__name__}")
        keys = rng.random((n, NUM_CARDS))
    else:
        row_seeds = np.asarray(row_seeds)
        if row_seeds.shape != (len(obs),) or row_seeds.dtype != np.uint64:
            raise ValueError(f"row_seeds must be a uint64 array of shape ({len(obs)},), got {row_seeds.dtype} "
                             f"{row_seeds.shape}")
        keys = np.empty((n, NUM_CARDS))
        _hash_keys(row_seeds, int(worlds), keys)
    order = np.argsort(keys, axis=1)  # a uniform random order of the 52 cards per world
    draws = np.broadcast_to(np.asarray(opponent_draws), (len(obs),))
    if draws.dtype.kind not in "iu" or (draws < 0).any():
        raise ValueError(f"opponent_draws must be integers >= 0 (one or one per row), got {opponent_draws!r}")
    stock_order = order
    if draws.any():  # a second, independent order for the stock, so dropped cards land anywhere in it
        fresh = rng.random((n, NUM_CARDS)) if row_seeds is None else _permute_keys(keys)
        stock_order = np.argsort(fresh, axis=1)
    s = GameState.empty(n)
    deal = WorldDeal(order=order, stock_order=stock_order, opponent_draws=draws.astype(np.int64))
    determinize_kernel(obs, int(worlds), int(player), plain(deal), plain(rule_params(rules, episode)), s.arrays())
    return s


class WorldDeal(NamedTuple):
    """How the unseen cards are dealt in each world (row i of the sampled states)."""

    order: np.ndarray  #: (n, 52) int64 the unseen cards go to the opponent's hand in this order
    stock_order: np.ndarray  #: (n, 52) int64 ... and the rest to the stock in this one
    opponent_draws: np.ndarray  #: (B,) int64 the prior's extra cards per observation (0: uniform)


class Seen(NamedTuple):
    """What one observation shows, as the kernel reads it."""

    phase: int
    top: int  #: the top of the pile, -1 none
    blocked: int  #: the card taken from the pile this turn, when it may not be discarded; -1 none
    limit: int  #: the knock limit
    stock: int  #: cards in the stock


@kernel
def determinize_kernel(obs, worlds, p, deal, rules, st):
    """Write world ``i % worlds`` of observation ``i // worlds`` into row i of the state ``st``
    (records as plain tuples: a ``WorldDeal``, the ``RuleParams``, the ``GameState``); player p
    is the observer. See ``determinize`` for what is sampled and what is chosen."""
    _determinize(obs, worlds, p, WorldDeal(*deal), RuleParams(*rules), GameState(*st))


@kernel
def _determinize(obs, worlds, p, deal, rules, st):
    q = 1 - p
    s = meld_scratch()
    rest = np.empty(NUM_CARDS, np.int64)  # the non-stock cards, upcard first
    avail = np.empty(NUM_CARDS, np.bool_)
    for i in range(deal.order.shape[0]):
        o = obs[i // worlds]
        seen = _read_observation(o, not rules.discard_taken_card)
        n_pile = _lay_pile(i, o, seen.top, st)
        n_opp, own_taken = _known_cards(i, o, p, seen, st)
        n_known = n_opp  # cards the opponent took from the pile: each a completed turn of its own
        # --- deal the unseen cards: the opponent's hand first, then the stock, in random order
        for c in range(NUM_CARDS):
            avail[c] = not (st.hands[i, p, c] or st.hands[i, q, c] or o[PILE_BURIED + c] > 0.5 or c == seen.top)
        extra = deal.opponent_draws[i // worlds]
        for t in range(NUM_CARDS):
            c = deal.order[i, t]
            if n_opp < HAND_SIZE + extra and avail[c]:
                st.hands[i, q, c] = True
                n_opp += 1
        _drop_extra(i, q, min(n_opp, HAND_SIZE + extra) - HAND_SIZE, st, s)
        stock_next = NUM_CARDS - seen.stock
        for c in range(NUM_CARDS):
            avail[c] = not (st.hands[i, p, c] or st.hands[i, q, c] or o[PILE_BURIED + c] > 0.5 or c == seen.top)
        j = stock_next
        for t in range(NUM_CARDS):
            c = deal.stock_order[i, t]
            if avail[c]:
                st.deck[i, j] = c
                j += 1
        _rest_of_deck(i, p, n_pile, seen.blocked, avail, stock_next, st, rest)
        _who_and_when(i, o, p, seen, n_pile, n_known + own_taken, rules, st)


@kernel(inline="always")
def _read_observation(o, blocks_taken):
    ph = PH_OFFER_NONDEALER  # (set below: the observation's phase one-hot was checked)
    for k in range(NUM_DECISION_PHASES):
        if o[PHASE + k] > 0.5:
            ph = k
    top = -1
    blocked = -1
    limit = 0
    for c in range(NUM_CARDS):
        if o[DISCARD_TOP + c] > 0.5:
            top = c
        if o[CANNOT_DISCARD + c] > 0.5 and blocks_taken:
            blocked = c
    for k in range(NUM_KNOCK_LIMITS):
        if o[KNOCK_LIMIT + k] > 0.5:
            limit = k
    return Seen(ph, top, blocked, limit, int(o[STOCK_SIZE] * STOCK_SCALE + 0.5))


@kernel(inline="always")
def _lay_pile(i, o, top, st):
    """The pile: buried cards in index order, the top card last; returns its size."""
    n_pile = 0
    for c in range(NUM_CARDS):
        if o[PILE_BURIED + c] > 0.5:
            st.pile[i, n_pile] = c
            n_pile += 1
    if top >= 0:
        st.pile[i, n_pile] = top
        n_pile += 1
    st.pile_size[i] = n_pile
    return n_pile


@kernel(inline="always")
def _known_cards(i, o, p, seen, st):
    """The observer's hand, the opponent's known cards and the public history. Returns (the
    opponent's known cards, the cards the observer took from the pile in earlier turns)."""
    q = 1 - p
    n_opp = 0
    own_taken = 0
    for c in range(NUM_CARDS):
        own = o[OWN_HAND + c] > 0.5
        opp_taken = o[OPP_TAKEN + c] > 0.5
        opp_disc = o[OPP_DISCARDED + c] > 0.5
        in_pile = o[PILE_BURIED + c] > 0.5 or c == seen.top
        st.hands[i, p, c] = own
        st.hands[i, q, c] = opp_taken
        st.taken[i, q, c] = opp_taken
        st.discarded[i, q, c] = opp_disc
        st.declined[i, q, c] = o[OPP_DECLINED + c] > 0.5
        st.taken[i, p, c] = own and (opp_disc or c == seen.blocked)
        st.discarded[i, p, c] = seen.phase >= PH_DRAW and (in_pile or opp_taken) and not opp_disc
        st.declined[i, p, c] = seen.phase == PH_FORCED_DRAW and c == seen.top
        n_opp += opp_taken
        if st.taken[i, p, c] and c != seen.blocked:
            own_taken += 1
    return n_opp, own_taken


@kernel
def _drop_extra(i, q, n_drop, st, s):
    """The prior: drop the opponent's card that leaves the least deadwood, ``n_drop`` times."""
    for _ in range(n_drop):
        _melds.masks_of_row(st.hands[i, q], s.mine)
        _melds.deadwood_after_discard_of_masks(s.mine, _RUN_DW, s.per_card, s.cand, s.tmp)
        drop = -1
        for c in range(NUM_CARDS):
            if st.hands[i, q, c] and not st.taken[i, q, c] and (drop < 0 or s.per_card[c] < s.per_card[drop]):
                drop = c
        st.hands[i, q, drop] = False


@kernel(inline="always")
def _rest_of_deck(i, p, n_pile, blocked, in_stock, stock_next, st, rest):
    """The upcard and the dealt cards (their order is irrelevant): deck[20], then deck[0..19]."""
    if n_pile > 0:
        up = st.pile[i, 0]  # the top card during the offer (the pile is the upcard alone)
    elif blocked >= 0:
        up = blocked  # the pile is empty only right after the upcard was taken
    else:
        up = -1
        for c in range(NUM_CARDS):
            if up < 0 and st.hands[i, p, c]:
                up = c
    rest[0] = up
    m = 1
    for c in range(NUM_CARDS):
        if c != up and not in_stock[c]:
            rest[m] = c
            m += 1
    for k in range(stock_next):  # rest[0] -> deck[20], rest[1..20] -> deck[0..19], then deck[21..]
        pos = UPCARD_POS if k == 0 else (k - 1 if k <= UPCARD_POS else k)
        st.deck[i, pos] = rest[k]
    st.stock_next[i] = stock_next


@kernel(inline="always")
def _who_and_when(i, o, p, seen, n_pile, pile_turns, rules, st):
    """Dealer, mover, phase, knock limit, completed turns and (game episodes) the scores."""
    q = 1 - p
    ph = seen.phase
    st.dealer[i] = p if o[IS_DEALER] > 0.5 else q
    st.current_player[i] = p
    st.phase[i] = ph
    st.taken_card[i] = seen.blocked if ph == PH_DISCARD else -1
    st.knock_limit[i] = seen.limit
    drew_now = 1 if ph == PH_DISCARD and seen.blocked < 0 and n_pile > 0 else 0
    turns = 0
    if ph >= PH_DRAW:  # completed turns (the offer has none): stock draws and pile takes the observation shows
        turns = (FULL_STOCK - seen.stock - drew_now) + pile_turns
    cap = rules.max_turns_per_hand
    st.turns[i] = max(0, turns if cap is None else min(turns, cap - 1))
    if rules.game_episode:
        target = rules.target_score
        for who, off in ((p, 0), (q, 1)):
            st.scores[i, who] = int(o[SCORES + off] * target + 0.5)
            st.hands_won[i, who] = 1 if st.scores[i, who] > 0 else 0


@kernel(inline="always")
def splitmix64(x):
    """The splitmix64 mixer: a well-spread uint64 hash of a uint64 (counter-based random numbers)."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@kernel(inline="always")
def unit_float(x):
    """A uint64 hash -> a float in [0, 1) (its top 53 bits)."""
    return (x >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@kernel
def _hash_keys(row_seeds, worlds, out):
    """out[b * worlds + k, c] = uniform [0, 1) from the hash of (row_seeds[b], k, c)."""
    for i in range(out.shape[0]):
        h = splitmix64(row_seeds[i // worlds] ^ splitmix64(np.uint64(i % worlds)))
        for c in range(NUM_CARDS):
            out[i, c] = unit_float(splitmix64(h ^ np.uint64(c)))


def _permute_keys(keys: np.ndarray) -> np.ndarray:
    """Fresh uniform keys derived from hashed keys (for an order independent of ``keys``' own)."""
    bits = keys.view(np.uint64)
    out = np.empty_like(keys)
    _rehash(bits, out)
    return out


@kernel
def _rehash(bits, out):
    for i in range(bits.shape[0]):
        for c in range(bits.shape[1]):
            out[i, c] = unit_float(splitmix64(bits[i, c] ^ np.uint64(0x5851F42D4C957F2D)))
