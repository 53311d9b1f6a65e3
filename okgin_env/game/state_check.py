"""The check of a saved state (``VectorGame.set_state``): a restored position must be one the kernels
could have reached, so that stepping it keeps every invariant (52 cards each in one place, legal masks).
"""

from __future__ import annotations

import numpy as np

from okgin_env.game.cards import HAND_SIZE, NUM_CARDS, card_text
from okgin_env.game.constants import (
    MAX_KNOCK_LIMIT,
    STOCK_START,
    UPCARD_POS,
    WALL,
    Phase,
)
from okgin_env.game.jit import kernel
from okgin_env.game.records import GameState
from okgin_env.game.rules import Rules, rule_params

_BOOL_FIELDS = ("hands", "taken", "discarded", "declined", "done")


def state_rows(state: GameState) -> int:
    """Batch size of ``state`` after checking every field's type, shape and dtype kind."""
    if not isinstance(state, GameState):
        raise ValueError(f"state must be an okgin_env.game.core.GameState, got {type(state).__name__}")
    ref = GameState.empty(1)
    n = None
    for name, a, want in zip(GameState._fields, state, ref):
        if not isinstance(a, np.ndarray):
            raise ValueError(f"state.{name} must be a numpy array, got {type(a).__name__}")
        if n is None:
            n = a.shape[0] if a.ndim else 0
        if n < 1 or a.shape != (n, *want.shape[1:]):
            tail = "".join(f", {x}" for x in want.shape[1:])
            raise ValueError(f"state.{name} must have shape (N{tail}) with the same N >= 1 for every field; "
                             f"got {a.shape}")
        if a.dtype.kind not in ("b" if name in _BOOL_FIELDS else "iu"):
            raise ValueError(f"state.{name} must have dtype {want.dtype}, got {a.dtype}")
    return n


def _bad(what: str, rows: np.ndarray, got=None) -> None:
    """ValueError for the first offending game (rows: bool (N,)); ``got(g)`` describes its value."""
    if rows.any():
        g = int(np.flatnonzero(rows)[0])
        detail = "" if got is None else f" (got {got(g)})"
        raise ValueError(f"invalid state in game {g} of {len(rows)}: {what}{detail}")


@kernel
def _card_places_kernel(deck, hands, stock_next, pile, pile_size, count, deck_ok):
    """count[i, c] = in how many places card c is: hand 0, hand 1, stock (deck[stock_next:]), pile
    (pile[:pile_size]); deck_ok[i] = deck[i] holds every card once (values already in 0..51)."""
    seen = np.empty(NUM_CARDS, np.bool_)
    for i in range(deck.shape[0]):
        seen[:] = False
        deck_ok[i] = True
        for j in range(NUM_CARDS):
            if seen[deck[i, j]]:
                deck_ok[i] = False
            seen[deck[i, j]] = True
        for c in range(NUM_CARDS):
            count[i, c] = hands[i, 0, c] + hands[i, 1, c]
        if deck_ok[i]:
            for j in range(stock_next[i], NUM_CARDS):
                count[i, deck[i, j]] += 1
        for j in range(pile_size[i]):
            count[i, pile[i, j]] += 1


def check_state(state: GameState, rules: Rules, episode: str) -> None:
    """Raise a one-line ``ValueError`` naming the first game and problem unless every game of ``state``
    is a position the kernels can reach under ``rules`` and ``episode``.

    Checked: shapes and dtype kinds; value ranges; the deck is a permutation; every card is in
    exactly one place (either hand, the stock ``deck[stock_next:]``, the pile ``pile[:pile_size]``),
    except that a finished hand may miss the knocker's face-down discard; ``done``, ``phase == OVER``
    and ``current_player == -1`` agree; hands hold 10 cards (11 for the player to discard); the
    offer phases (pile = the upcard, full stock, no turn, the right mover); stock and pile sizes
    of draw and discard decisions; the turn cap; ``taken_card``; ``taken`` within the hands;
    scores of running hands. The public history sets (discarded, declined) are not checked.
    """
    n = state_rows(state)
    s = state
    rp = rule_params(rules, episode)
    for name, low, high in (("deck", 0, NUM_CARDS - 1), ("stock_next", STOCK_START, NUM_CARDS),
                            ("pile_size", 0, NUM_CARDS), ("dealer", 0, 1), ("current_player", -1, 1),
                            ("phase", 0, int(Phase.OVER)), ("taken_card", -1, NUM_CARDS - 1),
                            ("knock_limit", 0, MAX_KNOCK_LIMIT), ("turns", 0, np.iinfo(np.int16).max),
                            ("scores", 0, np.iinfo(np.int32).max), ("hands_won", 0, np.iinfo(np.int32).max)):
        a = getattr(s, name)
        out = ((a < low) | (a > high)).reshape(n, -1).any(axis=1)
        _bad(f"{name} must be in {low}..{high}", out, lambda g, a=a: a[g].tolist())
    if rp.knock_limit >= 0:
        _bad(f"knock_limit must be {rp.knock_limit} under these rules", s.knock_limit != rp.knock_limit,
             lambda g: int(s.knock_limit[g]))
    in_pile = np.arange(NUM_CARDS)[None, :] < s.pile_size[:, None]
    _bad("pile[:pile_size] must hold card indices 0..51", (in_pile & ((s.pile < 0) | (s.pile >= NUM_CARDS))).any(axis=1))
    count = np.empty((n, NUM_CARDS), np.int16)
    deck_ok = np.empty(n, bool)
    _card_places_kernel(s.deck, s.hands, s.stock_next, s.pile, s.pile_size, count, deck_ok)
    _bad("deck must be a permutation of the 52 cards", ~deck_ok)
    _bad("a card is in more than one place (hands, stock = deck[stock_next:], pile[:pile_size])",
         (count > 1).any(axis=1), lambda g: card_text(int(count[g].argmax())))
    missing = (count == 0).sum(axis=1)
    # a knock discards face down: a finished hand may miss that one card, a running one none
    _bad("every card must be in a hand, the stock or the pile (a finished hand may miss the knock discard)",
         np.where(s.done, missing > 1, missing > 0), lambda g: f"{missing[g]} missing")
    over = s.phase == Phase.OVER
    _bad("done, phase == OVER and current_player == -1 must agree",
         (s.done != over) | (over != (s.current_player == -1)),
         lambda g: f"done={bool(s.done[g])}, phase={s.phase[g]}, current_player={s.current_player[g]}")
    live = ~s.done
    rows = np.arange(n)
    mover = np.clip(s.current_player, 0, 1).astype(np.int64)
    sizes = s.hands.sum(axis=2)
    want = np.full((n, 2), HAND_SIZE)
    want[rows, mover] += live & (s.phase == Phase.DISCARD)
    _bad("hands must hold 10 cards each (11 for the player to discard)", (sizes != want).any(axis=1),
         lambda g: f"sizes {sizes[g].tolist()}")
    offer = live & (s.phase <= Phase.FORCED_DRAW)
    _bad("during the upcard offer the pile is the upcard (deck[20]) alone, the stock is full and no turn "
         "was played", offer & ((s.pile_size != 1) | (s.stock_next != STOCK_START) | (s.turns != 0)
                                | (s.pile[:, 0] != s.deck[:, UPCARD_POS])))
    nondealer_moves = (s.phase == Phase.OFFER_NONDEALER) | (s.phase == Phase.FORCED_DRAW)
    _bad("the mover must be the non-dealer in offer_nondealer and forced_draw, the dealer in offer_dealer",
         offer & (s.current_player != np.where(nondealer_moves, 1 - s.dealer, s.dealer)),
         lambda g: f"current_player={s.current_player[g]}, dealer={s.dealer[g]}")
    stock = NUM_CARDS - s.stock_next.astype(np.int64)
    _bad(f"a draw decision needs a non-empty pile and more than {WALL} stock cards",
         live & (s.phase == Phase.DRAW) & ((s.pile_size < 1) | (stock <= WALL)),
         lambda g: f"pile_size={s.pile_size[g]}, stock={stock[g]}")
    _bad(f"a discard decision needs at least {WALL} stock cards", live & (s.phase == Phase.DISCARD) & (stock < WALL),
         lambda g: f"stock={stock[g]}")
    if rules.max_turns_per_hand is not None:  # None: no turn cap
        _bad(f"a running hand must have turns < max_turns_per_hand ({rules.max_turns_per_hand})",
             live & (s.turns >= rules.max_turns_per_hand), lambda g: int(s.turns[g]))
    tc = np.clip(s.taken_card.astype(np.int64), 0, NUM_CARDS - 1)
    held = s.hands[rows, mover, tc] & s.taken[rows, mover, tc]
    _bad("taken_card must be -1, or (in the discard phase) a card the mover took from the pile and holds",
         (s.taken_card >= 0) & ~(live & (s.phase == Phase.DISCARD) & held), lambda g: int(s.taken_card[g]))
    _bad("taken (cards taken from the pile and still held) must be a subset of hands",
         (s.taken & ~s.hands).any(axis=(1, 2)))
    if episode == "hand":
        _bad("a running hand episode has scores and hands_won 0",
             live & ((s.scores != 0).any(axis=1) | (s.hands_won != 0).any(axis=1)),
             lambda g: f"scores={s.scores[g].tolist()}, hands_won={s.hands_won[g].tolist()}")
    else:
        _bad(f"a running game has scores below target_score ({rules.target_score})",
             live & (s.scores >= rules.target_score).any(axis=1), lambda g: s.scores[g].tolist())


def ended_flags(state: GameState, rules: Rules, episode: str) -> np.ndarray:
    """(N, 2) (terminated, truncated) of finished games, as ``step`` would repeat them: a hand episode
    voided by the turn cap (no card missing, stock above the wall, turns at the cap) is truncated;
    every other finished game is terminated."""
    stock = NUM_CARDS - state.stock_next.astype(np.int64)
    all_placed = state.hands.sum(axis=(1, 2)) + stock + state.pile_size == NUM_CARDS
    capped = rules.max_turns_per_hand is not None and episode == "hand"  # None: no turn cap
    cap = capped & all_placed & (stock > WALL) & (state.turns >= (rules.max_turns_per_hand or 0))
    return np.stack([state.done & ~cap, state.done & cap], axis=1)
