"""Text rendering of Oklahoma Gin: a player's view of the table and the result of a hand.

No pygame, no terminal library: every function returns a string. ``color=True`` paints the
red suits (hearts, diamonds) with ANSI escape codes; ``color=False`` gives plain text for
logs and tests. The environments use these for ``render_mode="ansi"``/``"human"``, and
``play.py`` reuses them for its screen:

* ``render_player_view(state, player, rules, ...)``: one player's hand sorted and grouped
  into melds with the deadwood shown, the top of the discard pile, the stock size, the knock
  limit (and where it comes from), the scores and both players' last actions in words.
* ``render_hand_result(info, ...)``: both hands at a hand's end with melds, lay-offs,
  deadwood and a score line that explains the points (deadwood difference, gin bonus,
  undercut bonus, spade double), and the game's end.
* ``describe_hand(info)``: an env's fixed-shape ``info["hand_result"]`` (``okgin_env.features.hand_info``)
  as a readable dict of card texts and ints, which ``render_hand_result`` draws;
  ``hand_result_info(result, game, ...)`` does the same from a core ``HandResult`` row.
* ``LastAction`` / ``record_action(state, game, action)``: an action remembered with the card
  it moved, recorded *before* the action is applied (to say "took 7♥", the env must know the
  top of the pile before the take).

Nothing here decides a rule: melds and deadwood come from ``okgin_env.game.melds``, scores and
flags from the core's ``HandResult``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Mapping, NamedTuple, Sequence

import gymnasium
import numpy as np

from okgin_env.features.hand_info import hand_info
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD
from okgin_env.game.cards import (
    CARD_POINTS,
    NUM_CARDS,
    NUM_RANKS,
    card_pretty,
    card_text,
    cards_of,
    parse_card,
    sort_cards,
)
from okgin_env.game.constants import UPCARD_POS
from okgin_env.game.core import GameState, HandResult, Phase
from okgin_env.game.melds import best_melds
from okgin_env.game.rules import Rules

NAMES = ("player_0", "player_1")  #: default display names of player ids 0 and 1 (the AEC agent names)
NOBODY = -1  #: ``hand_result_info``'s player id for "nobody" (winner of a void hand, game_winner before the end)
NO_CARD = ""  #: ``hand_result_info``'s card text for "no card" (knock_card of a void hand)
_RED = "\x1b[31m"
_RESET = "\x1b[0m"
_RED_SUITS = (1, 2)  # hearts, diamonds

_PHASE_WORDS = {
    Phase.OFFER_NONDEALER: "take the upcard or pass",
    Phase.OFFER_DEALER: "take the upcard or pass (the non-dealer passed)",
    Phase.FORCED_DRAW: "draw from the stock (both passed on the upcard)",
    Phase.DRAW: "draw from the stock or take the top discard",
    Phase.DISCARD: "discard a card, or knock",
}


# ----------------------------------------------------------------------------- cards

def card_str(card: int, color: bool = False) -> str:
    """'7♥' (red with ``color``)."""
    s = card_pretty(int(card))
    if color and int(card) // NUM_RANKS in _RED_SUITS:
        return f"{_RED}{s}{_RESET}"
    return s


def cards_str(cards: Sequence[int], color: bool = False) -> str:
    """Space-separated display form of cards, in the given order."""
    return " ".join(card_str(c, color) for c in cards)


def _group_melds(cards: Sequence[int], meld_id: np.ndarray) -> tuple[list[list[int]], list[int]]:
    """(melds as sorted card lists, ordered by id; deadwood cards sorted) for cards with meld ids."""
    groups: dict[int, list[int]] = {}
    dead: list[int] = []
    for c in sort_cards(cards):
        m = int(meld_id[c])
        (dead if m < 0 else groups.setdefault(m, [])).append(c)
    return [groups[m] for m in sorted(groups)], dead


def meld_groups(cards: Sequence[int]) -> tuple[list[list[int]], list[int]]:
    """One minimal-deadwood arrangement of ``cards`` (``melds.best_melds``): (melds, deadwood cards)."""
    hand = np.zeros((1, NUM_CARDS), bool)
    hand[0, list(cards)] = True
    return _group_melds(cards, best_melds(hand)[0])


def _points(cards: Sequence[int]) -> int:
    return int(sum(int(CARD_POINTS[c]) for c in cards))


def _melds_line(melds: Sequence[Sequence[int]], color: bool) -> str:
    return " ".join(f"[{cards_str(m, color)}]" for m in melds) if melds else "(none)"


# ----------------------------------------------------------------------- last actions

class LastAction(NamedTuple):
    """An action and the card it concerned (-1 for a stock draw, whose card is hidden)."""

    action: int
    card: int

    def words(self, color: bool = False, own: bool = False) -> str:
        """'drew from stock', 'took 7♥', 'passed on 7♥', 'discarded K♠', 'knocked'.

        ``own``: the viewer made the action, so a knock also names the face-down card.
        """
        a = self.action
        if a == DRAW_STOCK:
            return "drew from stock"
        if a == TAKE_DISCARD:
            return f"took {card_str(self.card, color)}"
        if a == PASS:
            return f"passed on {card_str(self.card, color)}"
        if a >= KNOCK:
            return f"knocked ({card_str(self.card, color)} face down)" if own else "knocked"
        return f"discarded {card_str(self.card, color)}"


def pile_top(state: GameState, game: int = 0) -> int:
    """The card on top of game ``game``'s discard pile, -1 when the pile is empty."""
    n = int(state.pile_size[game])
    return int(state.pile[game, n - 1]) if n else -1


def record_action(state: GameState, game: int, action: int) -> LastAction:
    """Remember ``action`` of game ``game`` *before* it is applied (reads the pile top)."""
    a = int(action)
    if a in (TAKE_DISCARD, PASS):
        return LastAction(a, pile_top(state, game))
    if a == DRAW_STOCK:
        return LastAction(a, -1)
    return LastAction(a, a - KNOCK if a >= KNOCK else a)


# ----------------------------------------------------------------------- player view

def knock_limit_words(state: GameState, rules: Rules, game: int = 0, color: bool = False) -> str:
    """'7 (from the upcard 7♦)', '0 (from the upcard A♠: gin only)' or '10 (fixed by the rules)'."""
    limit = int(state.knock_limit[game])
    gin_only = ": gin only" if limit == 0 else ""
    if rules.knock_limit == "upcard":
        return f"{limit} (from the upcard {card_str(int(state.deck[game, UPCARD_POS]), color)}{gin_only})"
    return f"{limit} (fixed by the rules{gin_only})"


def render_player_view(state: GameState, player: int, rules: Rules | None = None, *, game: int = 0,
                       episode: str = "hand", last_actions: Sequence[LastAction | None] = (None, None),
                       names: Sequence[str] = NAMES, color: bool = False) -> str:
    """The table as ``player`` sees it (their own hand, public information only).

    ``state`` is a ``VectorGame.state``; ``last_actions[p]`` is player p's latest action
    (``record_action``) or None.
    """
    rules = rules if rules is not None else Rules()
    p, q = int(player), 1 - int(player)
    hand = cards_of(state.hands[game, p])
    melds, dead = meld_groups(hand)
    cur = int(state.current_player[game])
    phase = int(state.phase[game])
    lines = []
    if cur < 0:
        lines.append(f"View of {names[p]} -- the episode is over")
    elif cur == p:
        lines.append(f"View of {names[p]} -- {names[p]} to act: {_PHASE_WORDS[Phase(phase)]}")
    else:
        lines.append(f"View of {names[p]} -- {names[cur]} to act")
    role = "dealer" if int(state.dealer[game]) == p else "non-dealer"
    lines.append(f"  Hand ({len(hand)}, {role}): {cards_str(sort_cards(hand), color)}")
    lines.append(f"  Melds:     {_melds_line(melds, color)}")
    lines.append(f"  Deadwood:  {cards_str(dead, color) if dead else '(none)'} = {_points(dead)}")
    taken = int(state.taken_card[game])
    if cur == p and taken >= 0 and not rules.discard_taken_card:
        lines.append(f"  Taken from the pile this turn (may not be discarded): {card_str(taken, color)}")
    n_pile = int(state.pile_size[game])
    top = card_str(pile_top(state, game), color) if n_pile else "(empty)"
    stock = NUM_CARDS - int(state.stock_next[game])
    lines.append(f"  Discard pile: {top} on top ({n_pile} card{'s' * (n_pile != 1)})   Stock: {stock} cards")
    lines.append(f"  Knock limit: {knock_limit_words(state, rules, game, color)}")
    if episode == "game":
        s = state.scores[game]
        lines.append(f"  Scores: {names[p]} {int(s[p])}, {names[q]} {int(s[q])} (target {rules.target_score})")
    else:
        lines.append("  Scores: one-hand episode")
    acts = []
    for who in (p, q):
        la = last_actions[who] if who < len(last_actions) else None
        if la is not None:
            acts.append(f"{names[who]} {la.words(color, own=who == p)}")
    lines.append(f"  Last actions: {'; '.join(acts) if acts else '(none yet)'}")
    return "\n".join(lines)


# ------------------------------------------------------------------------ hand result

def hand_result_info(result: HandResult, game: int = 0, knock_limit: int | None = None) -> dict[str, Any]:
    """Row ``game`` of a core ``HandResult`` as the readable dict of ``describe_hand``."""
    return describe_hand(hand_info(result, game, knock_limit))


def describe_hand(info: Mapping[str, Any]) -> dict[str, Any]:
    """A fixed-shape hand result (``okgin_env.features.hand_info``: an env's ``info["hand_result"]``) as a
    readable dict of card texts and ints, which ``render_hand_result`` draws.

    Players are ids 0/1 (``player_0``/``player_1``), ``NOBODY`` (-1) for "nobody"; cards are
    canonical texts ('7h'), ``NO_CARD`` ('') for "no card". Every key has one type whatever
    the hand. Keys: knocker, winner, gin, undercut, void, turn_cap, spade_doubled, deadwood
    [p0, p1], points [p0, p1], scores [p0, p1], hands, melds (per player, a list of card-text
    lists; on a knock the defender's own melds only), deadwood_cards (per player), layoffs (list
    of {"card", "onto"}: defender cards laid off onto a knocker meld), knock_card, upcard,
    dealer, knock_limit (-1 when not known), game_over, game_winner (-1 until the game is over).
    """
    void = bool(info["void"])
    knocker = int(info["knocker"])
    final = np.asarray(info["hands"], bool)
    hands = [cards_of(final[p]) for p in (0, 1)]
    melds: list[list[list[int]]] = [[], []]
    dead: list[list[int]] = [[], []]
    layoffs: list[dict[str, Any]] = []
    if void:  # no showdown: each player's own best arrangement
        ids = best_melds(final)
        for p in (0, 1):
            melds[p], dead[p] = _group_melds(hands[p], ids[p])
    else:
        meld_id = np.asarray(info["meld_id"])
        laid = np.asarray(info["laid_off"], bool)
        defender = 1 - knocker
        melds[knocker], dead[knocker] = _group_melds(hands[knocker], meld_id)
        own = [c for c in hands[defender] if not laid[c]]
        melds[defender], dead[defender] = _group_melds(own, meld_id)
        kmelds = {int(meld_id[m[0]]): m for m in melds[knocker]}
        for c in sort_cards(c for c in hands[defender] if laid[c]):
            onto = kmelds.get(int(meld_id[c]), [])
            layoffs.append({"card": card_text(c), "onto": [card_text(x) for x in onto]})
    texts = lambda cs: [card_text(c) for c in cs]  # noqa: E731
    kc = int(info["knock_card"])
    pair = lambda key: [int(info[key][0]), int(info[key][1])]  # noqa: E731
    return {  # ids are already -1 for "nobody" (NOBODY)
        "knocker": knocker,
        "winner": int(info["winner"]),
        "gin": bool(info["gin"]),
        "undercut": bool(info["undercut"]),
        "void": void,
        "turn_cap": bool(info["turn_cap"]),
        "spade_doubled": bool(info["spade_doubled"]),
        "deadwood": pair("deadwood"),
        "points": pair("points"),
        "scores": pair("scores"),
        "hands": [texts(sort_cards(h)) for h in hands],
        "melds": [[texts(m) for m in melds[p]] for p in (0, 1)],
        "deadwood_cards": [texts(dead[p]) for p in (0, 1)],
        "layoffs": layoffs,
        "knock_card": NO_CARD if kc < 0 else card_text(kc),
        "upcard": card_text(int(info["upcard"])),
        "dealer": int(info["dealer"]),
        "knock_limit": int(info.get("knock_limit", NOBODY)),
        "game_over": bool(info["game_over"]),
        "game_winner": int(info["game_winner"]),
    }


def _parse(texts: Sequence[str]) -> list[int]:
    return [parse_card(t) for t in texts]


def possessive(name: str) -> str:
    """'player_1' -> "player_1's"; 'You' -> 'Your' (the terminal and the web call the person "You")."""
    return {"you": "your", "You": "Your"}.get(name, f"{name}'s")


def score_line(info: dict[str, Any], names: Sequence[str] = NAMES) -> str:
    """One line explaining the hand's points: '48 points to player_0 = player_1's deadwood 23 + gin bonus 25.'"""
    if info["void"]:
        why = "the turn cap was reached" if info["turn_cap"] else "only two cards were left in the stock"
        return f"Void hand ({why}): no score."
    w, k = info["winner"], info["knocker"]
    d = 1 - k
    pts = info["points"][w]
    base = pts // 2 if info["spade_doubled"] else pts
    K, D = info["deadwood"][k], info["deadwood"][d]
    if info["gin"]:
        expl = f"{possessive(names[d])} deadwood {D} + gin bonus {base - D}"
    elif info["undercut"]:
        expl = f"undercut: deadwood difference {K} - {D} = {K - D} + undercut bonus {base - (K - D)}"
    else:
        expl = f"deadwood difference {D} - {K}"
    if info["spade_doubled"]:
        expl = f"({expl}) x 2 (spade upcard {card_pretty(parse_card(info['upcard']))})"
    return f"{pts} points to {names[w]} = {expl}."


def render_hand_result(info: dict[str, Any], *, names: Sequence[str] = NAMES, color: bool = False) -> str:
    """Both hands at a hand's end (melds, lay-offs, deadwood), the score line and the totals.

    ``info`` is a ``describe_hand`` / ``hand_result_info`` dict.
    """
    k = info["knocker"]
    lines = []
    if info["void"]:
        lines.append("Hand over: void hand.")
    else:
        kc = info["knock_card"]
        face = f" ({card_str(parse_card(kc), color)} face down)" if kc else ""
        limit = "" if info["knock_limit"] < 0 else f", knock limit {info['knock_limit']}"
        how = "went gin" if info["gin"] else f"knocked with {info['deadwood'][k]} deadwood{limit}"
        lines.append(f"Hand over: {names[k]} {how}{face}.")
    order = (0, 1) if k < 0 else (k, 1 - k)
    width = max(len(n) for n in names) + len(" (defender)")
    for p in order:
        role = "" if k < 0 else (" (knocker)" if p == k else " (defender)")
        label = f"{names[p]}{role}".ljust(width)
        melds = [_parse(m) for m in info["melds"][p]]
        if p == k and info["layoffs"]:
            parts = []
            for m in melds:
                extra = [parse_card(x["card"]) for x in info["layoffs"] if _parse(x["onto"]) == m]
                tail = f" + {cards_str(extra, color)}" if extra else ""
                parts.append(f"[{cards_str(m, color)}{tail}]")
            meld_text = " ".join(parts)
        else:
            meld_text = _melds_line(melds, color)
        dead = _parse(info["deadwood_cards"][p])
        line = f"  {label} melds: {meld_text}   deadwood: {cards_str(dead, color) if dead else '(none)'}"
        line += f" = {info['deadwood'][p]}"
        if p != k and info["layoffs"]:
            line += f"   laid off: {cards_str([parse_card(x['card']) for x in info['layoffs']], color)}"
        lines.append(line)
    lines.append("  " + score_line(info, names))
    s = info["scores"]
    if info["game_over"]:
        w = info["game_winner"]
        lines.append(f"  Game over: the game goes to {names[w]}, {s[w]} to {s[1 - w]}.")
    else:
        lines.append(f"  Totals: {names[0]} {s[0]}, {names[1]} {s[1]}.")
    return "\n".join(lines)


def render_in_mode(render_mode: str | None, render_text: Callable[..., str]) -> str | None:
    """The envs' ``render()``: "ansi" returns the text, "human" prints it (coloured on a terminal)."""
    if render_mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    text = render_text(color=render_mode == "human" and sys.stdout.isatty())
    if render_mode == "human":
        print(text)
        return None
    return text
