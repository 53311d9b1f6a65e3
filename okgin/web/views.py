"""JSON views of the table for the web page: cards, hands, legal moves, hand results, frames.

Pure functions of ``okgin.human_table.Table`` state and ``hand_result_info`` dicts; what a person may
see is decided by the callers (``okgin.web.games``), not here.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from okgin.human_table import HUMAN, Table, command_for, move_words
from okgin_env.game.actions import KNOCK, action_parts
from okgin_env.game.actions import DRAW_STOCK
from okgin_env.game.cards import CARD_POINTS, NUM_CARDS, card_pretty, card_text, cards_of, parse_card, sort_cards
from okgin_env.game.core import Phase
from okgin_env.game.melds import deadwood_after_discard
from okgin_env.render.text import knock_limit_words, meld_groups, pile_top, possessive, render_hand_result, score_line

PHASE_PROMPT = {
    Phase.OFFER_NONDEALER: "Take the {top} or pass",
    Phase.OFFER_DEALER: "{opp} passed: take the {top} or pass",
    Phase.FORCED_DRAW: "Both passed on the upcard: draw from the stock",
    Phase.DRAW: "Draw from the stock or take the {top}",
    Phase.DISCARD: "Discard a card, or knock",
}


def card_json(card: int) -> dict[str, str]:
    """{'card': '7h', 'text': '7♥'}: the canonical text and the display form."""
    return {"card": card_text(int(card)), "text": card_pretty(int(card))}


def _points(cards: Sequence[int]) -> int:
    return int(sum(int(CARD_POINTS[c]) for c in cards))


def hand_json(cards: Sequence[int]) -> dict[str, Any]:
    """A hand sorted and grouped into melds (one minimal-deadwood arrangement) with its deadwood."""
    melds, dead = meld_groups(list(cards))
    return {"count": len(cards), "cards": [card_json(c) for c in sort_cards(cards)],
            "melds": [[card_json(c) for c in m] for m in melds],
            "deadwood_cards": [card_json(c) for c in dead], "deadwood": _points(dead)}


_LABELS = {"draw": "Draw from stock", "take": "Take {top}", "pass": "Pass", "discard": "Discard {card}"}


def action_label(action: int, state, deadwood: int | None = None) -> str:
    """The accessible name of the button that plays ``action``: 'Draw from stock', 'Take 7♥',
    'Gin, discarding 7♥' or 'Knock, discarding 7♥ (deadwood 4)' (``deadwood`` left after it)."""
    kind, card = action_parts(action)
    if kind == "knock":
        if deadwood == 0:
            return f"Gin, discarding {card_pretty(card)}"
        return f"Knock, discarding {card_pretty(card)} (deadwood {deadwood})"
    top = pile_top(state)
    return _LABELS[kind].format(card=card_pretty(card) if card is not None else "",
                                top=card_pretty(top) if top >= 0 else "the top discard")


def legal_json(mask: np.ndarray, state) -> list[dict[str, Any]]:
    """Every legal action: id, the terminal's command, kind and button label; discards and knocks name
    their card, knocks also the deadwood they leave and whether that is gin."""
    legal = np.flatnonzero(mask)
    dw = None
    if (legal >= KNOCK).any() and (legal < KNOCK + NUM_CARDS).any():  # one kernel call for every knock
        dw = deadwood_after_discard(state.hands[0, int(state.current_player[0])][None])[0]
    out = []
    for a in legal:
        kind, card = action_parts(a)
        left = int(dw[card]) if kind == "knock" else None
        row = {"id": int(a), "command": command_for(a), "kind": kind, "label": action_label(a, state, left)}
        if card is not None:  # a discard (0-51) or a knock (52-103) names its card
            row["card"] = card_text(card)
        if kind == "knock":
            row.update(deadwood=left, gin=left == 0)
        out.append(row)
    return out


def player_or_none(v: Any) -> int | None:
    """A player id of a hand result, None for "nobody" (older dicts say None, newer ones -1)."""
    return None if v is None or int(v) < 0 else int(v)


def plain_score_line(info: dict, names: Sequence[str]) -> str:
    """The terminal's score line, said of a person as "points to you" and "your deadwood" (mid-sentence,
    not "You"/"Your"): render's ``possessive`` makes "you" "your"."""
    return score_line(info, ["you" if n == "You" else n for n in names])


def headline(info: dict, names: Sequence[str]) -> str:
    """The showdown in one plain sentence: 'expert went gin', 'You knocked with 6 (knock limit 8)'."""
    if info["void"]:
        why = "the turn cap was reached" if info["turn_cap"] else "only two cards were left in the stock"
        return f"Void hand: no score ({why})"
    k = player_or_none(info["knocker"])
    limit = info.get("knock_limit")
    limit_text = "" if limit is None or limit < 0 else f" (knock limit {int(limit)})"
    if info["gin"]:
        return f"{names[k]} went gin{limit_text}"
    said = f"{names[k]} knocked with {info['deadwood'][k]}{limit_text}"
    return f"{said}, and {names[1 - k]} undercut" if info["undercut"] else said


def result_json(info: dict, names: Sequence[str], hand_no: int) -> dict[str, Any]:
    """A hand result (``hand_result_info``) with plain words for it: headline, score line, points."""
    pretty = lambda texts: [{"card": t, "text": card_pretty(parse_card(t))} for t in texts]  # noqa: E731
    w, k = player_or_none(info["winner"]), player_or_none(info["knocker"])
    how = "void" if info["void"] else "gin" if info["gin"] else "undercut" if info["undercut"] else "knock"
    limit = info.get("knock_limit")
    limit = None if limit is None or limit < 0 else int(limit)
    upcard = card_pretty(parse_card(info["upcard"]))
    return {
        "hand": hand_no, "how": how, "knocker": k, "winner": w, "points": list(info["points"]),
        "points_won": 0 if w is None else info["points"][w], "scores": list(info["scores"]),
        "deadwood": list(info["deadwood"]), "knock_limit": limit, "upcard": upcard,
        "knock_limit_text": f"{limit} (upcard {upcard})" if limit is not None else f"upcard {upcard}",
        "knock_card": pretty([info["knock_card"]])[0] if info["knock_card"] else None,
        "melds": [[pretty(m) for m in info["melds"][p]] for p in (0, 1)],
        "deadwood_cards": [pretty(info["deadwood_cards"][p]) for p in (0, 1)],
        "layoffs": [{"card": pretty([x["card"]])[0], "onto": pretty(x["onto"])} for x in info["layoffs"]],
        "headline": headline(info, names),
        "deadwood_titles": [f"{possessive(names[p])} deadwood: {info['deadwood'][p]}" for p in (0, 1)],
        "score_line": plain_score_line(info, names), "text": render_hand_result(info, names=names),
        "game_over": bool(info["game_over"]), "game_winner": player_or_none(info["game_winner"]),
    }


def frame_json(t: Table, mover: int | None, result: dict | None) -> dict[str, Any]:
    """Everything on the table (both hands face up) after a move: watch and replay frames."""
    s = t.state
    top = pile_top(s)
    move = None
    if mover is not None and t.last[mover] is not None:
        _, la, drawn = t.last_move
        move = f"{t.names[mover]} {move_words(la, drawn, False, reveal=True)}"
    return {
        "move_no": t.moves, "hand_no": result["hand"] if result else t.hand_no, "names": list(t.names),
        "dealer": int(s.dealer[0]), "current": -1 if t.finished else t.current,
        "hands": [hand_json(cards_of(s.hands[0, p])) for p in (0, 1)] if result is None else None,
        "pile_top": card_json(top) if top >= 0 else None, "pile_size": int(s.pile_size[0]),
        "stock": NUM_CARDS - int(s.stock_next[0]),
        # at a hand's end the table already holds the next deal: say the ended hand's knock limit
        "knock_limit_text": knock_limit_words(s, t.rules, 0) if result is None else result["knock_limit_text"],
        "scores": result["scores"] if result else [int(x) for x in s.scores[0]],
        "move": move, "result": result, "finished": t.finished,
    }


def turn_json(t: Table) -> dict[str, Any]:
    """The person's view of their turn (player 0, ``HUMAN``): their hand, the pile, the stock's size,
    the opponent's card count, the knock limit, the scores, both players' last moves, the legal moves."""
    s = t.state
    names = t.names
    phase = Phase(int(s.phase[0]))
    top = pile_top(s)
    taken = int(s.taken_card[0])
    mine = t.last[HUMAN]
    drawn = None
    if mine is not None and mine.action == DRAW_STOCK and phase == Phase.DISCARD and t.current == HUMAN:
        drawn = card_json(t.drawn[HUMAN])
    last = {names[p]: move_words(t.last[p], t.drawn[p], False, reveal=p == HUMAN)
            for p in (0, 1) if t.last[p] is not None}
    return dict(
        status="your_turn", hand_no=t.hand_no, dealer=names[int(s.dealer[0])],
        you_deal=int(s.dealer[0]) == HUMAN, phase=phase.name.lower(),
        prompt=PHASE_PROMPT[phase].format(top=card_pretty(top) if top >= 0 else "top discard", opp=names[1]),
        hand=hand_json(cards_of(s.hands[0, HUMAN])), drawn=drawn,
        taken=card_json(taken) if (taken >= 0 and not t.rules.discard_taken_card) else None,
        pile_top=card_json(top) if top >= 0 else None, pile_size=int(s.pile_size[0]),
        stock=NUM_CARDS - int(s.stock_next[0]), opponent_cards=int(s.hands[0, 1 - HUMAN].sum()),
        knock_limit=int(s.knock_limit[0]), knock_limit_text=knock_limit_words(s, t.rules, 0),
        scores=[int(x) for x in s.scores[0]], last=last, legal=legal_json(t.mask, s),
    )
