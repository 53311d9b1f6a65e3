"""Pixel rendering of Oklahoma Gin: one player's view of the table as an RGB image.

``render_rgb(state, player, rules, ...)`` returns a ``(HEIGHT, WIDTH, 3)`` uint8 array, the
frame the environments give for ``render_mode="rgb_array"`` (and what
``gymnasium.wrappers.RecordVideo`` writes to a video). It shows what ``render_player_view``
says in text, laid out as a card table:

* a header: whose turn it is and what they may do;
* the player's hand as cards (rank and suit glyph in a four-colour deck: black spades, red
  hearts, blue diamonds, green clubs, so that spades and clubs differ at a glance), grouped as
  ``melds.best_melds`` groups them: each meld underlined, then the deadwood cards and their
  points; a card taken from the pile this turn (not to be discarded) has a yellow border;
* the top of the discard pile as a card, the stock size, the knock limit (and the upcard
  that set it), the scores (game episodes), the opponent's card count and both players'
  last actions;
* with ``last_hand`` (a ``render.hand_result_info`` dict), the last hand's result and the
  hand the other player showed.

No pygame and no font files: text is drawn from ``FONT``, a 5x7 bitmap font (and 7x7 suit
glyphs) defined once below, with numpy slice assignments only. Text bitmaps and card faces
are cached, so a frame costs a fraction of a millisecond after the first few.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from okgin_env.game.cards import (
    CARD_POINTS,
    NUM_CARDS,
    NUM_RANKS,
    RANK_CHARS,
    SUIT_SYMBOLS,
    card_pretty,
    cards_of,
    parse_card,
)
from okgin_env.game.constants import UPCARD_POS
from okgin_env.game.core import GameState, Phase
from okgin_env.game.rules import Rules
from okgin_env.render.text import NAMES, LastAction, meld_groups, score_line

WIDTH, HEIGHT = 640, 352  #: frame size in pixels (both multiples of 16, as video encoders like)

# ------------------------------------------------------------------------------ font
# 5x7 glyphs (7x7 for the suits), one string per row, '#' = ink. Text is upper-cased before
# drawing; characters not here are drawn as '?'.
_GLYPH_ROWS: dict[str, str] = {
    "A": ".###. #...# #...# ##### #...# #...# #...#", "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.", "D": "####. #...# #...# #...# #...# #...# ####.",
    "E": "##### #.... #.... ####. #.... #.... #####", "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####", "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.", "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#", "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#", "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.", "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#", "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.", "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.", "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.", "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..", "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.", "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####", "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.", "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.", "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.", "9": ".###. #...# #...# .#### ....# ...#. .##..",
    " ": "..... ..... ..... ..... ..... ..... .....", ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    "-": "..... ..... ..... ##### ..... ..... .....", "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    "/": "....# ...#. ...#. ..#.. .#... .#... #....", "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...", ".": "..... ..... ..... ..... ..... .##.. .##..",
    ",": "..... ..... ..... ..... .##.. ..#.. .#...", "_": "..... ..... ..... ..... ..... ..... #####",
    "=": "..... ..... ##### ..... ##### ..... .....", "'": ".##.. ..#.. .#... ..... ..... ..... .....",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..", "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    "[": ".###. .#... .#... .#... .#... .#... .###.", "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    ";": "..... .##.. .##.. ..... .##.. ..#.. .#...",
    "♠": "...#... ..###.. .#####. ####### ##.#.## ...#... ..###..",
    "♥": ".##.##. ####### ####### ####### .#####. ..###.. ...#...",
    "♦": "...#... ..###.. .#####. ####### .#####. ..###.. ...#...",
    "♣": "..###.. ..###.. ##.#.## ####### ##.#.## ...#... ..###..",  # three lobes; the spade has a point
}
#: char -> (7, w) bool bitmap
FONT: dict[str, np.ndarray] = {ch: np.array([[c == "#" for c in row] for row in rows.split()], bool)
                               for ch, rows in _GLYPH_ROWS.items()}
GLYPH_H = 7

# ---------------------------------------------------------------------------- colours
_FELT = np.array([22, 92, 52], np.uint8)
_INK = np.array([245, 245, 235], np.uint8)  # text on the felt
_DIM = np.array([170, 205, 180], np.uint8)  # secondary text
_GOLD = np.array([250, 210, 60], np.uint8)  # meld underlines, highlights
_CARD = np.array([252, 252, 248], np.uint8)
_EDGE = np.array([40, 40, 40], np.uint8)
_RED = np.array([200, 20, 30], np.uint8)
_BLACK = np.array([15, 15, 15], np.uint8)
_BLUE = np.array([20, 70, 200], np.uint8)
_GREEN = np.array([10, 130, 40], np.uint8)
#: ink of each suit (♠ ♥ ♦ ♣), a four-colour deck: at 7x7 pixels the spade and club glyphs alone
#: look alike, the colours tell all four suits apart
SUIT_COLORS = (_BLACK, _RED, _BLUE, _GREEN)
_BACK = np.array([40, 70, 160], np.uint8)  # card backs (stock, opponent)

CARD_W, CARD_H = 40, 56  #: card size in pixels
_GAP, _GROUP_GAP = 4, 14  # between cards; between meld groups


# ------------------------------------------------------------------------ primitives

@lru_cache(maxsize=512)
def text_mask(text: str, scale: int = 2) -> np.ndarray:
    """(7 * scale, width) bool bitmap of ``text`` (upper-cased; unknown characters as '?')."""
    glyphs = [FONT.get(ch, FONT["?"]) for ch in text.upper()]
    if not glyphs:
        return np.zeros((GLYPH_H * scale, 0), bool)
    gap = np.zeros((GLYPH_H, 1), bool)
    row = np.concatenate([part for g in glyphs for part in (g, gap)][:-1], axis=1)
    out = row.repeat(scale, axis=0).repeat(scale, axis=1)
    out.flags.writeable = False
    return out


@lru_cache(maxsize=256)  # ~20 kB a line of text
def _text_tile(text: str, scale: int, color: bytes, bg: bytes) -> np.ndarray:
    """(h, w, 3) uint8 picture of ``text`` in ``color`` on ``bg`` (cached: a frame then only copies)."""
    m = text_mask(text, scale)
    tile = np.where(m[:, :, None], np.frombuffer(color, np.uint8), np.frombuffer(bg, np.uint8))
    tile.flags.writeable = False
    return tile


def draw_text(img: np.ndarray, x: int, y: int, text: str, color: np.ndarray = _INK, scale: int = 2,
              bg: np.ndarray = _FELT) -> int:
    """Draw ``text`` on a plain ``bg`` area with its top-left corner at (x, y), clipped to the
    image; returns the end x."""
    tile = _text_tile(text, scale, color.tobytes(), bg.tobytes())
    h, w = tile.shape[:2]
    w_fit, h_fit = max(0, min(w, img.shape[1] - x)), max(0, min(h, img.shape[0] - y))
    img[y:y + h_fit, x:x + w_fit] = tile[:h_fit, :w_fit]
    return x + w


def _rect(img: np.ndarray, x: int, y: int, w: int, h: int, color: np.ndarray) -> None:
    img[y:y + h, x:x + w] = color


@lru_cache(maxsize=NUM_CARDS + 1)
def card_face(card: int) -> np.ndarray:
    """(CARD_H, CARD_W, 3) picture of a card face (``card=-1``: a card back)."""
    face = np.empty((CARD_H, CARD_W, 3), np.uint8)
    face[:] = _EDGE
    if card < 0:
        face[1:-1, 1:-1] = _CARD
        face[3:-3, 3:-3] = _BACK
        return face
    face[1:-1, 1:-1] = _CARD
    rank, suit = card % NUM_RANKS, card // NUM_RANKS
    color = SUIT_COLORS[suit]
    label = "10" if RANK_CHARS[rank] == "T" else RANK_CHARS[rank]
    draw_text(face, 4, 4, label, color, scale=2, bg=_CARD)
    big = text_mask(SUIT_SYMBOLS[suit], 3)
    y0, x0 = CARD_H - big.shape[0] - 6, (CARD_W - big.shape[1]) // 2
    np.copyto(face[y0:y0 + big.shape[0], x0:x0 + big.shape[1]], color, where=big[:, :, None])
    face.flags.writeable = False
    return face


def draw_card(img: np.ndarray, x: int, y: int, card: int, border: np.ndarray | None = None) -> None:
    """A card face (or back for -1) at (x, y), optionally framed in ``border``."""
    img[y:y + CARD_H, x:x + CARD_W] = card_face(int(card))
    if border is not None:
        for t in range(2):
            img[y + t, x:x + CARD_W] = img[y + CARD_H - 1 - t, x:x + CARD_W] = border
            img[y:y + CARD_H, x + t] = img[y:y + CARD_H, x + CARD_W - 1 - t] = border


@lru_cache(maxsize=1)
def _background() -> np.ndarray:
    bg = np.empty((HEIGHT, WIDTH, 3), np.uint8)
    bg[:] = _FELT
    bg.flags.writeable = False
    return bg


# ------------------------------------------------------------------------------ frame

_PHASE_SHORT = {
    Phase.OFFER_NONDEALER: "take the upcard or pass",
    Phase.OFFER_DEALER: "take the upcard or pass",
    Phase.FORCED_DRAW: "draw from the stock",
    Phase.DRAW: "draw or take the discard",
    Phase.DISCARD: "discard or knock",
}


def _wrap(text: str, width: int) -> list[str]:
    """Greedy word wrap to ``width`` characters."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def _result_lines(info: dict[str, Any], names: Sequence[str], player: int) -> list[str]:
    """Headline, score line, totals and the other player's shown hand of a ``hand_result_info`` dict."""
    k = info["knocker"]
    if info["void"]:
        head = "void hand"
    elif info["gin"]:
        head = f"{names[k]} went gin"
    else:
        head = f"{names[k]} knocked with {info['deadwood'][k]} deadwood"
    s = info["scores"]
    if info["game_over"]:
        w = info["game_winner"]
        tail = f"game over: {names[w]} wins {s[w]} to {s[1 - w]}"
    else:
        tail = f"totals: {names[0]} {s[0]}, {names[1]} {s[1]}"
    other = " ".join(card_pretty(parse_card(t)) for t in info["hands"][1 - player])
    return [f"last hand: {head}", score_line(info, names), tail, f"{names[1 - player]} held {other}"]


def render_rgb(state: GameState, player: int, rules: Rules | None = None, *, game: int = 0,
               episode: str = "hand", last_hand: dict[str, Any] | None = None,
               last_actions: Sequence[LastAction | None] = (None, None),
               names: Sequence[str] = NAMES) -> np.ndarray:
    """(HEIGHT, WIDTH, 3) uint8 picture of the table as ``player`` sees it (own hand, public
    information only), in game ``game`` of a ``VectorGame.state``.

    ``last_hand``: a ``render.hand_result_info`` dict to show at the bottom; ``last_actions[p]``:
    player p's latest action (``render.record_action``) or None.
    """
    rules = rules if rules is not None else Rules()
    p, q = int(player), 1 - int(player)
    if p not in (0, 1):
        raise ValueError(f"player must be 0 or 1, got {player!r}")
    img = _background().copy()
    cur, phase = int(state.current_player[game]), int(state.phase[game])

    # header
    if cur < 0:
        head = f"{names[p]}: the episode is over"
    elif cur == p:
        head = f"{names[p]} to act: {_PHASE_SHORT[Phase(phase)]}"
    else:
        head = f"{names[p]}: {names[cur]} to act"
    draw_text(img, 10, 8, head, _GOLD)

    _draw_hand(img, state, game, p, cur == p and not rules.discard_taken_card)

    # discard pile, stock and the numbers
    y = 128
    n_pile = int(state.pile_size[game])
    draw_text(img, 10, y + 4, "discard", _DIM, scale=1)
    if n_pile:
        draw_card(img, 10, y + 18, int(state.pile[game, n_pile - 1]))
    stock = NUM_CARDS - int(state.stock_next[game])
    draw_text(img, 64, y + 4, "stock", _DIM, scale=1)
    if stock:
        draw_card(img, 64, y + 18, -1)
    draw_text(img, 64 + (CARD_W - text_mask(str(stock)).shape[1]) // 2, y + 18 + CARD_H + 4, str(stock))
    tx = 130
    limit = int(state.knock_limit[game])
    src = (f"upcard {card_pretty(int(state.deck[game, UPCARD_POS]))}" if rules.knock_limit == "upcard"
           else "fixed")
    lines = [f"knock limit {limit} ({src}{', gin only' if limit == 0 else ''})",
             f"pile {n_pile}  stock {stock}"]
    if episode == "game":
        s = state.scores[game]
        lines.append(f"scores: {names[p]} {int(s[p])}, {names[q]} {int(s[q])} (to {rules.target_score})")
    else:
        lines.append("one-hand episode")
    lines.append(f"{names[q]} holds {int(state.hands[game, q].sum())} cards")
    for who in (p, q):
        la = last_actions[who] if who < len(last_actions) else None
        if la is not None:
            lines.append(f"{names[who]} {la.words(own=who == p)}")
    for i, line in enumerate(lines[:6]):
        draw_text(img, tx, y + 18 * i, line, _INK if i else _GOLD)

    if last_hand is not None:
        _draw_last_hand(img, last_hand, names, p)
    return img


def _draw_hand(img: np.ndarray, state: GameState, game: int, p: int, mark_taken: bool) -> None:
    """Player ``p``'s hand at the top, grouped into melds (underlined), then the deadwood; with
    ``mark_taken`` the card just taken from the pile (which may not be discarded) is outlined."""
    hand = cards_of(state.hands[game, p])
    melds, dead = meld_groups(hand)
    role = "dealer" if int(state.dealer[game]) == p else "non-dealer"
    dead_points = int(sum(int(CARD_POINTS[c]) for c in dead))
    draw_text(img, 10, 30, f"hand ({len(hand)}, {role})   deadwood {dead_points}", _DIM)
    taken = int(state.taken_card[game])
    blocked = taken if (mark_taken and taken >= 0) else -1
    x, y = 10, 50
    for group in [*melds, dead]:
        if not group:
            continue
        if group is not dead:
            _rect(img, x, y + CARD_H + 4, len(group) * (CARD_W + _GAP) - _GAP, 3, _GOLD)
        for c in group:
            draw_card(img, x, y, c, _GOLD if c == blocked else None)
            x += CARD_W + _GAP
        x += _GROUP_GAP - _GAP


def _draw_last_hand(img: np.ndarray, last_hand: dict[str, Any], names: Sequence[str], p: int) -> None:
    """The last hand's result at the bottom, wrapped to the picture's width (five lines at most)."""
    y = 246
    _rect(img, 0, y - 6, WIDTH, 2, _DIM)
    wrapped = [w for line in _result_lines(last_hand, names, p) for w in _wrap(line, (WIDTH - 20) // 12)]
    for i, line in enumerate(wrapped[:5]):
        draw_text(img, 10, y + 19 * i, line, _GOLD if i == 0 else _INK)
