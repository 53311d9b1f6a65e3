"""Melds, deadwood and the showdown (docs/RULES.md "Melds and deadwood", "Showdown"); the card helpers
are in ``test_cards.py``, the rule options in ``game/test_rule_options.py``.

Every expected number below was worked out by hand from docs/RULES.md; the comment next to
each row shows the arrangement. A small brute-force oracle written here (independent of
``okgin_env.game.melds`` and ``okgin_env.testing.reference``) cross-checks the numba kernels on
random hands.
"""

from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest

from okgin_env.game import melds
from okgin_env.game.cards import (
    CARD_POINTS,
    CARD_RANK,
    CARD_SUIT,
    NUM_CARDS,
    card_index,
    card_text,
    cards_of,
    format_cards,
    mask_of,
    parse_card,
    parse_cards,
)

NOT_HELD = melds.DEADWOOD_NOT_HELD


def hands_of(*texts: str) -> np.ndarray:
    """(B, 52) bool batch from card texts."""
    return np.stack([mask_of(parse_cards(t)) for t in texts])


def cards(text: str) -> set[int]:
    return set(parse_cards(text))


# ---------------------------------------------------------------------------
# A brute-force oracle, written from docs/RULES.md only (slow, obvious).
# ---------------------------------------------------------------------------
def _candidate_melds(hand: list[int]) -> list[frozenset[int]]:
    """Every set (3 or 4 of a rank) and every run (3+ consecutive of a suit; ace low)."""
    out: list[frozenset[int]] = []
    by_rank: dict[int, list[int]] = {}
    for c in hand:
        by_rank.setdefault(int(CARD_RANK[c]), []).append(c)
    for group in by_rank.values():
        for k in (3, 4):
            out += [frozenset(m) for m in combinations(group, k)]
    held = set(hand)
    for suit in range(4):
        for lo in range(13):
            run = []
            for r in range(lo, 13):  # no wrap: Q-K-A is not a run
                c = card_index(r, suit)
                if c not in held:
                    break
                run.append(c)
                if len(run) >= 3:
                    out.append(frozenset(run))
    return out


def oracle_arrangements(hand) -> list[tuple[list[frozenset[int]], int]]:
    """Every arrangement of disjoint melds, with its deadwood."""
    hand = sorted(int(c) for c in hand)
    cand = _candidate_melds(hand)
    result: list[tuple[list[frozenset[int]], int]] = []

    def rec(rest: frozenset[int], chosen: list[frozenset[int]], dead: int) -> None:
        if not rest:
            result.append((list(chosen), dead))
            return
        c = min(rest)
        rec(rest - {c}, chosen, dead + int(CARD_POINTS[c]))  # c is deadwood
        for m in cand:  # or c is in a meld (decided at its lowest card: no duplicates)
            if c in m and m <= rest:
                rec(rest - m, chosen + [m], dead)

    rec(frozenset(hand), [], 0)
    return result


def oracle_deadwood(hand) -> int:
    return min(d for _, d in oracle_arrangements(hand))


def _layoff_targets(card: int, meld: frozenset[int]) -> bool:
    ranks = {int(CARD_RANK[c]) for c in meld}
    suits = {int(CARD_SUIT[c]) for c in meld}
    if len(ranks) == 1:  # a set: only the fourth card of a set of three
        return len(meld) == 3 and int(CARD_RANK[card]) in ranks
    return int(CARD_SUIT[card]) in suits and int(CARD_RANK[card]) not in ranks


def _layoff_ok(meld: frozenset[int], added: list[int]) -> bool:
    if not added:
        return True
    ranks = {int(CARD_RANK[c]) for c in meld}
    if len(ranks) == 1:
        return len(meld) == 3 and len(added) == 1
    all_ranks = sorted(ranks | {int(CARD_RANK[c]) for c in added})
    return all_ranks == list(range(all_ranks[0], all_ranks[0] + len(all_ranks)))


def _best_layoff(leftover: list[int], kmelds: list[frozenset[int]]) -> int:
    """Most points the defender can lay off (chained run extensions included)."""
    options = []
    for c in leftover:
        targets = [i for i, m in enumerate(kmelds) if _layoff_targets(c, m)]
        if targets:
            options.append((c, [None] + targets))
    best = 0
    for choice in product(*(t for _, t in options)):
        added: dict[int, list[int]] = {}
        for (c, _), t in zip(options, choice):
            if t is not None:
                added.setdefault(t, []).append(c)
        if all(_layoff_ok(kmelds[i], a) for i, a in added.items()):
            best = max(best, sum(int(CARD_POINTS[c]) for a in added.values() for c in a))
    return best


def oracle_showdown(knocker, defender) -> tuple[int, int]:
    """(K, D) per docs/RULES.md "Showdown", knocker tie-break included."""
    arrs = oracle_arrangements(knocker)
    k = min(d for _, d in arrs)
    if k == 0:
        return 0, oracle_deadwood(defender)
    best_d = -1
    for kmelds, dead in arrs:
        if dead != k:
            continue
        d = min(
            ddead - _best_layoff(sorted(set(defender) - set().union(*dmelds)), kmelds)
            for dmelds, ddead in oracle_arrangements(defender)
        )
        best_d = max(best_d, d)
    return k, best_d


# ---------------------------------------------------------------------------
# hand_deadwood: hand-computed rows
# ---------------------------------------------------------------------------
DEADWOOD_ROWS = [
    # (hand, minimal deadwood)  -- arrangement in the comment
    ("", 0),
    ("As", 1),  # ace is worth 1
    ("Ks", 10),
    ("Th Jd Qc", 30),  # T J Q are 10 each; different suits, no meld
    ("9h 9d", 18),
    ("As 2s 3s", 0),  # A-2-3 is a run (ace low)
    ("Qs Ks As", 21),  # Q-K-A is not a run: 10 + 10 + 1
    ("Ks As 2s", 13),  # no wrap-around K-A-2 either
    ("Js Qs Ks As 2s", 3),  # J-Q-K run; A 2 left over
    ("As 2h 3s", 6),  # a run needs one suit
    ("Ts Js Qs", 0),
    ("Ks Kh Kd", 0),  # set of three
    ("Ks Kh Kd Kc", 0),  # set of four
    ("Ks Kh", 20),
    ("As 2s 3s 4s 5s 6s 7s 8s 9s Ts", 0),  # one long run
    ("Ah 2h 3h 4h Jh Qh Kh", 0),  # A-4 and J-K
    ("Qh Kh Ah 2h", 23),  # no runs at all
    ("7s 7h 7d 8s 9s", 14),  # run 7s8s9s leaves 7h 7d = 14 (the set would leave 17)
    ("7s 7h 7d 7c 8s 9s", 0),  # 4-card set loses to set 7h7d7c + run 7s8s9s
    ("7s 7h 7d 7c 8s", 8),  # set of four, 8s left
    ("5s 5h 5d 5c 6c 7c", 0),  # 5s5h5d + 5c6c7c
    ("2s 3s 4s 3h 3d", 6),  # run (3h 3d left) or set (2s 4s left): 6 either way
    ("Ah As Ad 2h 3h 2s 3s", 1),  # A-2-3 h, A-2-3 s, Ad left (the set would leave 10)
    ("4h 5h 6h 6d 6s 6c 7h", 0),  # 4h-7h + 6d6s6c
    ("5s 6s 7s 5h 5d 7h 7d", 6),  # 5s5h5d + 7s7h7d, 6s left
    ("5s 6s 7s 8s 5h 5d 8h 8d", 10),  # 5s6s7s + 8s8h8d, 5h 5d left
    ("As 2s 3s 4h 5h 6h 9c 9d 9s Kc", 10),
    ("As 2s 3s 4h 5h 6h 9c 9d 9s Kc 2d", 12),  # eleven cards
    ("Kh Qd Js Tc 8d 6s 5c 4d 3c 2h", 68),  # no meld: 10+10+10+10+8+6+5+4+3+2
    ("Ts Th Td Tc Js Jh Jd Qs Qh Qd", 0),
]


@pytest.mark.parametrize("hand,expected", DEADWOOD_ROWS)
def test_hand_deadwood(hand, expected):
    assert int(melds.hand_deadwood(hands_of(hand))[0]) == expected


def test_hand_deadwood_batch_matches_rows():
    batch = hands_of(*[h for h, _ in DEADWOOD_ROWS])
    got = np.asarray(melds.hand_deadwood(batch))
    assert got.shape == (len(DEADWOOD_ROWS),)
    assert got.tolist() == [e for _, e in DEADWOOD_ROWS]


def test_oracle_agrees_with_hand_rows():
    # The oracle itself is checked against the hand-computed rows before it is trusted.
    for hand, expected in DEADWOOD_ROWS:
        assert oracle_deadwood(parse_cards(hand)) == expected, hand


def _dense_hands(rng: np.random.Generator, n: int, size: int, max_rank: int = 7) -> list[list[int]]:
    """Random hands drawn from the low ranks so that melds and overlaps are common."""
    pool = [card_index(r, s) for s in range(4) for r in range(max_rank)]
    return [sorted(int(c) for c in rng.choice(pool, size=size, replace=False)) for _ in range(n)]


@pytest.mark.parametrize("size", [0, 1, 3, 5, 8, 10, 11, 12])
def test_hand_deadwood_matches_oracle_on_random_hands(size):
    rng = np.random.default_rng(1000 + size)
    hands = _dense_hands(rng, 60, size) + [
        sorted(int(c) for c in rng.choice(NUM_CARDS, size=size, replace=False)) for _ in range(40)
    ]
    got = np.asarray(melds.hand_deadwood(np.stack([mask_of(h) for h in hands])))
    for h, g in zip(hands, got):
        assert int(g) == oracle_deadwood(h), format_cards(h)


# ---------------------------------------------------------------------------
# deadwood_after_discard
# ---------------------------------------------------------------------------
def test_deadwood_after_discard_eleven_cards():
    # A-2-3 spades, 4-5-6 hearts, three nines, plus Kc and 2d.
    hand = "As 2s 3s 4h 5h 6h 9c 9d 9s Kc 2d"
    expected = {
        "Kc": 2,  # 2d left
        "2d": 10,  # Kc left
        "As": 17,  # 2s 3s + Kc + 2d = 2+3+10+2
        "2s": 16,  # As 3s + 12
        "3s": 15,  # As 2s + 12
        "4h": 23,  # 5h 6h + 12
        "5h": 22,  # 4h 6h + 12
        "6h": 21,  # 4h 5h + 12
        "9c": 30,  # two nines + 12
        "9d": 30,
        "9s": 30,
    }
    got = np.asarray(melds.deadwood_after_discard(hands_of(hand)))[0]
    assert got.shape == (NUM_CARDS,)
    for text, value in expected.items():
        assert int(got[parse_card(text)]) == value, text
    held = cards(hand)
    for c in range(NUM_CARDS):
        if c not in held:
            assert int(got[c]) == NOT_HELD, card_text(c)


def test_deadwood_after_discard_matches_oracle():
    rng = np.random.default_rng(7)
    hands = _dense_hands(rng, 40, 11) + _dense_hands(rng, 20, 11, max_rank=13)
    got = np.asarray(melds.deadwood_after_discard(np.stack([mask_of(h) for h in hands])))
    for h, row in zip(hands, got):
        for c in range(NUM_CARDS):
            want = oracle_deadwood([x for x in h if x != c]) if c in h else NOT_HELD
            assert int(row[c]) == want, (format_cards(h), card_text(c))



def test_deadwood_after_discard_held_agrees_on_held_cards():
    """The unclamped variant the core's mask uses: equal on held cards, above any deadwood elsewhere."""
    rng = np.random.default_rng(8)
    hands = _dense_hands(rng, 1500, 11) + _dense_hands(rng, 500, 11, max_rank=13)
    hands += [cards("As Ad Ac Ah 2s 2d 2c 2h 3s 3d 3c")]  # every card in a set: many set choices
    masks = np.stack([mask_of(h) for h in hands])
    full = np.asarray(melds.deadwood_after_discard(masks))
    ms, cand, tmp = np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64)
    out = np.empty(NUM_CARDS, np.int64)
    for i, h in enumerate(hands):
        melds.masks_of_row(masks[i], ms)
        melds.deadwood_after_discard_held_of_masks(ms, melds.RUN_DEADWOOD, out, cand, tmp)
        np.testing.assert_array_equal(out[masks[i]], full[i, masks[i]], err_msg=format_cards(h))
        assert (out[~masks[i]] > NOT_HELD).all(), format_cards(h)

@pytest.mark.parametrize("size", [1, 2, 4, 10, 11, 12])
def test_deadwood_and_best_discard_matches_the_full_search(size):
    """The one-pass scalar kernel agrees with hand_deadwood and the min of deadwood_after_discard."""
    rng = np.random.default_rng(2000 + size)
    hands = _dense_hands(rng, 1500, size) + _dense_hands(rng, 500, size, max_rank=13)
    if size == 11:  # every card in a set: 4 + 4 + 3, and a run block that any discard breaks
        hands += [cards("As Ad Ac Ah 2s 2d 2c 2h 3s 3d 3c"), cards("2s 3s 4s 7h 8h 9h Tc Jc Qc 5d 6d")]
    masks = np.stack([mask_of(h) for h in hands])
    now = np.asarray(melds.hand_deadwood(masks))
    after = np.asarray(melds.deadwood_after_discard(masks)).min(axis=1)
    ms, cand, tmp = np.empty(4, np.int64), np.empty(4, np.int64), np.empty(4, np.int64)
    for i, h in enumerate(hands):
        melds.masks_of_row(masks[i], ms)
        got = melds.deadwood_and_best_discard_of_masks(ms, melds.RUN_DEADWOOD, melds.RUN_BEST_DROP, cand, tmp)
        assert got == (now[i], after[i]), format_cards(h)
    three = melds.hand_masks(mask_of(cards("3s 3d 3c"))[None])[0]  # a set minus any card leaves two threes
    assert melds.deadwood_and_best_discard_of_masks(three, melds.RUN_DEADWOOD, melds.RUN_BEST_DROP, cand, tmp) == (0, 6)


@pytest.mark.parametrize("size", [3, 10, 11, 12])
def test_deadwood_after_discard_and_best_is_the_one_pass_kernel_for_every_discard(size):
    """after[c], after_best[c] = deadwood_and_best_discard of the hand without c, for every held c
    (the outs of a discard decision read it once per drawn card); cards not held are untouched."""
    rng = np.random.default_rng(3000 + size)
    hands = _dense_hands(rng, 1000, size) + _dense_hands(rng, 300, size, max_rank=13)
    if size == 12:
        hands += [cards("As Ad Ac Ah 2s 2d 2c 2h 3s 3d 3c 3h"), cards("2s 3s 4s 5s 7h 8h 9h Tc Jc Qc 5d 5c")]
    ms, rest, cand, tmp = (np.empty(4, np.int64) for _ in range(4))
    for h in hands:
        held = mask_of(h)
        melds.masks_of_row(held, ms)
        after, best = np.full(NUM_CARDS, -5, np.int64), np.full(NUM_CARDS, -5, np.int64)
        melds.deadwood_after_discard_and_best_of_masks(ms, melds.RUN_DEADWOOD, melds.RUN_BEST_DROP, after, best,
                                                       cand, tmp)
        for c in np.flatnonzero(held):
            without = held.copy()
            without[c] = False
            melds.masks_of_row(without, rest)
            want = melds.deadwood_and_best_discard_of_masks(rest, melds.RUN_DEADWOOD, melds.RUN_BEST_DROP, cand, tmp)
            assert (after[c], best[c]) == want, (format_cards(h), c)
        assert (after[~held] == -5).all() and (best[~held] == -5).all()

# ---------------------------------------------------------------------------
# best_melds
# ---------------------------------------------------------------------------
def _groups(meld_row: np.ndarray) -> set[frozenset[int]]:
    ids = {int(i) for i in meld_row if i >= 0}
    return {frozenset(int(c) for c in np.flatnonzero(meld_row == i)) for i in ids}


def _is_meld(group: frozenset[int]) -> bool:
    return group in set(_candidate_melds(sorted(group)))


def test_best_melds_unique_arrangement():
    hand = "As 2s 3s 4h 5h 6h 9c 9d 9s Kc"
    row = np.asarray(melds.best_melds(hands_of(hand)))[0]
    assert _groups(row) == {frozenset(cards("As 2s 3s")), frozenset(cards("4h 5h 6h")), frozenset(cards("9c 9d 9s"))}
    assert int(row[parse_card("Kc")]) == -1  # deadwood
    assert all(int(row[c]) == -1 for c in range(NUM_CARDS) if c not in cards(hand))  # not held


def test_best_melds_prefers_set_of_three_plus_run_over_set_of_four():
    row = np.asarray(melds.best_melds(hands_of("7s 7h 7d 7c 8s 9s")))[0]
    assert _groups(row) == {frozenset(cards("7h 7d 7c")), frozenset(cards("7s 8s 9s"))}


def test_best_melds_is_minimal_valid_and_deterministic():
    rng = np.random.default_rng(11)
    hands = _dense_hands(rng, 60, 10) + _dense_hands(rng, 30, 11, max_rank=13)
    batch = np.stack([mask_of(h) for h in hands])
    first = np.asarray(melds.best_melds(batch))
    again = np.asarray(melds.best_melds(batch.copy()))
    np.testing.assert_array_equal(first, again)
    for h, row in zip(hands, first):
        groups = _groups(row)
        assert all(_is_meld(g) for g in groups), format_cards(h)
        melded = set().union(*groups) if groups else set()
        assert melded <= set(h)
        dead = sum(int(CARD_POINTS[c]) for c in h if c not in melded)
        assert dead == oracle_deadwood(h), format_cards(h)


# ---------------------------------------------------------------------------
# showdown
# ---------------------------------------------------------------------------
KNOCKER = "As 2s 3s 4h 5h 6h 9c 9d 9s 2d"  # melds A-2-3s, 4-5-6h, 9-9-9; 2d deadwood: K = 2
SETS = "Ks Kh Kd Qs Qh Qd"  # two sets of the defender, no lay-offs anywhere

SHOWDOWN_ROWS = [
    # (id, knocker's ten, defender's ten, K, D after lay-offs, laid-off cards or None if not unique)
    ("gin-no-layoffs", "As 2s 3s 4h 5h 6h 7h 9c 9d 9s", "4s 8h 9h Ks Kh Kd Qc Jc Tc 2d", 0, 23, ""),
    # ^ gin: the defender keeps 4s 8h 9h 2d (4+8+9+2) although all but 2d would lay off
    ("gin-defender-zero", "As 2s 3s 4h 5h 6h 7h 9c 9d 9s", "Ts Th Td Tc Js Jh Jd Qs Qh Qd", 0, 0, ""),
    ("layoff-on-set", KNOCKER, SETS + " 9h 5c 8d Jc", 2, 23, "9h"),  # 5+8+10 left
    ("layoff-both-ends", KNOCKER, SETS + " 3h 7h 5c 8d", 2, 13, "3h 7h"),  # 3h-4-5-6-7h
    ("layoff-chained-up", KNOCKER, SETS + " 7h 8h 5c Tc", 2, 15, "7h 8h"),  # 8h only after 7h
    ("layoff-chained-ace-run", KNOCKER, SETS + " 4s 5s 8d Jc", 2, 18, "4s 5s"),  # A-2-3-4-5s
    ("joint-own-meld-and-layoff", KNOCKER, SETS + " 7h 8h 8c 8s", 2, 0, "7h"),  # 8h 8c 8s + 7h off
    ("knocker-never-lays-off", KNOCKER, SETS + " 3d 4d 5d 8c", 2, 8, ""),  # 2d stays K
    ("no-wraparound-layoff", KNOCKER, "Ks Kh Qh Qd Qc Jh Jd Jc 5c 8d", 2, 33, ""),  # Ks can't go on A-2-3s
    # Tie-break: 2s 3s 4s 3h 3d has two minimal arrangements (run 2s3s4s, 3h 3d left; or set
    # 3s3h3d, 2s 4s left), both 6. The knocker uses the one leaving the defender more.
    ("tiebreak-set", "2s 3s 4s 3h 3d 9c Tc Jc Qc Kc", "3c 5s 6s 8h " + SETS, 6, 19, "3c"),
    # ^ run: 5s 6s lay off -> D = 3+8 = 11; set: 3c lays off -> D = 5+6+8 = 19; 19 is used
    ("tiebreak-run", "2s 3s 4s 3h 3d 9c Tc Jc Qc Kc", "3c As 8h 7c " + SETS, 6, 18, "As"),
    # ^ run: As lays off below 2s -> D = 3+8+7 = 18; set: 3c lays off -> D = 1+8+7 = 16; 18 is used
]


@pytest.mark.parametrize("knocker,defender,k,d,laid", [r[1:] for r in SHOWDOWN_ROWS], ids=[r[0] for r in SHOWDOWN_ROWS])
def test_showdown(knocker, defender, k, d, laid):
    assert not cards(knocker) & cards(defender)
    sd = melds.showdown(hands_of(knocker), hands_of(defender))
    assert int(sd.knocker_deadwood[0]) == k
    assert int(sd.defender_deadwood[0]) == d
    assert set(cards_of(np.asarray(sd.laid_off)[0])) == cards(laid)


@pytest.mark.parametrize("knocker,defender,k,d", [r[1:5] for r in SHOWDOWN_ROWS], ids=[r[0] for r in SHOWDOWN_ROWS])
def test_oracle_agrees_with_showdown_rows(knocker, defender, k, d):
    assert oracle_showdown(parse_cards(knocker), parse_cards(defender)) == (k, d)


def test_showdown_batch_and_meld_ids():
    rows = [r for r in SHOWDOWN_ROWS]
    sd = melds.showdown(hands_of(*[r[1] for r in rows]), hands_of(*[r[2] for r in rows]))
    assert np.asarray(sd.knocker_deadwood).tolist() == [r[3] for r in rows]
    assert np.asarray(sd.defender_deadwood).tolist() == [r[4] for r in rows]
    meld_id = np.asarray(sd.meld_id)
    laid_off = np.asarray(sd.laid_off)
    for b, (_, kn, de, _, _, _) in enumerate(rows):
        kcards, dcards = cards(kn), cards(de)
        k_ids = {int(meld_id[b, c]) for c in kcards if meld_id[b, c] >= 0}
        d_ids = {int(meld_id[b, c]) for c in dcards if meld_id[b, c] >= 0 and not laid_off[b, c]}
        assert not k_ids & d_ids
        if k_ids and d_ids:
            assert max(k_ids) < min(d_ids)  # knocker's melds first
        for c in cards_of(laid_off[b]):
            assert c in dcards and int(meld_id[b, c]) in k_ids  # joined a knocker meld
    # "layoff-on-set": 9h joins the nines
    i = [r[0] for r in rows].index("layoff-on-set")
    assert meld_id[i, parse_card("9h")] == meld_id[i, parse_card("9s")]


def test_showdown_matches_oracle_on_random_deals():
    rng = np.random.default_rng(2024)
    pool = [card_index(r, s) for s in range(4) for r in range(8)]  # dense melds
    kn, de = [], []
    for _ in range(150):
        twenty = [int(c) for c in rng.choice(pool, size=20, replace=False)]
        kn.append(sorted(twenty[:10]))
        de.append(sorted(twenty[10:]))
    sd = melds.showdown(np.stack([mask_of(h) for h in kn]), np.stack([mask_of(h) for h in de]))
    for b in range(len(kn)):
        k, d = oracle_showdown(kn[b], de[b])
        got = (int(sd.knocker_deadwood[b]), int(sd.defender_deadwood[b]))
        assert got == (k, d), (format_cards(kn[b]), format_cards(de[b]))
