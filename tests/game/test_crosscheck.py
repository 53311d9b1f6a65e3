"""Cross-check the fast engine against the brute-force reference (``okgin_env.testing.reference``).

Two parts:

* the numba meld kernels (``melds.hand_deadwood``, ``deadwood_after_discard``,
  ``best_melds``, ``showdown``) against brute force on thousands of hands, most of
  them drawn from few ranks so that sets, 4-sets, long runs and lay-offs are common;
* whole episodes replayed through ``VectorGame`` and ``ReferenceGame`` side by side:
  same decks and dealers, the same actions, and at every decision the same player to
  move, the same legal-action mask and the same observation (of both players); at
  every hand end the same result (knocker, winner, gin, undercut, void, deadwoods,
  points, scores, ...), rewards and flags.

Actions come from two policies: uniformly random legal actions, and an
epsilon-greedy one (take the discard when it helps, discard to the least deadwood,
knock when allowed) so that hands actually end in knocks, gins and undercuts, which
uniform play almost never reaches. Decks are either uniformly shuffled or "rigged":
the twenty dealt cards come from five or six ranks, giving meld-rich hands.

A failure message carries the rules, decks, dealers and actions to replay it.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Callable

import numpy as np
import pytest

from okgin_env.game import melds
from okgin_env.game.actions import DRAW_STOCK, KNOCK, PASS, TAKE_DISCARD, action_text
from okgin_env.game.cards import NUM_CARDS, NUM_RANKS, format_cards, mask_of
from okgin_env.game.core import VectorGame
from okgin_env.game.observation import OBS_FIELDS, obs_field
from okgin_env.game.rules import Rules
from okgin_env.game import eaai_showdown
from okgin_env.testing.reference import (
    Phase,
    ReferenceGame,
    defender_deadwood,
    eaai_showdown_details,
    is_meld,
    minimal_arrangements,
    points,
    reference_deadwood,
    reference_deadwood_after_discard,
    reference_showdown,
)


# ---------------------------------------------------------------------------------------
# random hands, biased toward melds
# ---------------------------------------------------------------------------------------
def biased_cards(rng: random.Random, k: int) -> list[int]:
    """k distinct cards, usually drawn from a few ranks (and sometimes few suits)."""
    style = rng.random()
    if style < 0.15:  # uniform
        return rng.sample(range(NUM_CARDS), k)
    if style < 0.55:  # a block of consecutive ranks, all suits: sets, runs, lay-offs
        nr = rng.randint(3, 7)
        lo = rng.randint(0, NUM_RANKS - nr)
        pool = [s * NUM_RANKS + r for s in range(4) for r in range(lo, lo + nr)]
    elif style < 0.8:  # long runs in two suits
        suits = rng.sample(range(4), 2)
        pool = [s * NUM_RANKS + r for s in suits for r in range(NUM_RANKS)]
    else:  # scattered ranks, all suits: sets and 4-sets
        ranks = rng.sample(range(NUM_RANKS), rng.randint(3, 6))
        pool = [s * NUM_RANKS + r for s in range(4) for r in ranks]
    cards = rng.sample(pool, min(k, len(pool)))
    rest = [c for c in range(NUM_CARDS) if c not in cards]
    return cards + rng.sample(rest, k - len(cards))


# ---------------------------------------------------------------------------------------
# meld kernels against brute force
# ---------------------------------------------------------------------------------------
def test_hand_deadwood_matches_brute_force() -> None:
    rng = random.Random(11)
    hands = [biased_cards(rng, rng.choice([10, 10, 11, 11, 0, 3, 7, 12])) for _ in range(3000)]
    got = melds.hand_deadwood(np.stack([mask_of(h) for h in hands]))
    for h, g in zip(hands, got):
        assert int(g) == reference_deadwood(h), format_cards(sorted(h))


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_deadwood_after_discard_matches_brute_force() -> None:
    rng = random.Random(12)
    hands = [biased_cards(rng, 11) for _ in range(2500)]
    got = melds.deadwood_after_discard(np.stack([mask_of(h) for h in hands]))
    for h, row in zip(hands, got):
        want = np.full(NUM_CARDS, melds.DEADWOOD_NOT_HELD)
        for c, dw in reference_deadwood_after_discard(h).items():
            want[c] = dw
        assert (row == want).all(), format_cards(sorted(h))


def test_best_melds_is_a_minimal_arrangement() -> None:
    rng = random.Random(13)
    hands = [biased_cards(rng, rng.choice([10, 11])) for _ in range(2000)]
    masks = np.stack([mask_of(h) for h in hands])
    ids = melds.best_melds(masks)
    assert (ids == melds.best_melds(masks)).all()  # deterministic
    for h, row in zip(hands, ids):
        assert (row[~mask_of(h)] == -1).all()
        groups: dict[int, list[int]] = {}
        for c in h:
            if row[c] >= 0:
                groups.setdefault(int(row[c]), []).append(c)
        assert all(is_meld(g) for g in groups.values()), format_cards(sorted(h))
        dead = sum(points(c) for c in h if row[c] < 0)
        assert dead == reference_deadwood(h), format_cards(sorted(h))


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_eaai_showdown_matches_the_reference() -> None:
    """The EAAI framework's showdown (``showdown="eaai"``): the same draws of each side's declared
    melds, the same greedy lay-offs (cards and the knocker meld each joins), the same K and D."""
    rng = random.Random(15)
    pairs = [biased_cards(rng, 20) for _ in range(2000)]
    seeds = np.array([rng.getrandbits(64) for _ in pairs], np.uint64)
    k_got, d_got, meld_id, laid = eaai_showdown.showdown(np.stack([mask_of(c[:10]) for c in pairs]),
                                                          np.stack([mask_of(c[10:]) for c in pairs]), seeds)
    laid_off_some = 0
    for b, cards in enumerate(pairs):
        kc, dc = cards[:10], cards[10:]
        why = f"knocker {format_cards(sorted(kc))} | defender {format_cards(sorted(dc))} | seed {int(seeds[b])}"
        k, d, mine, own, lay = eaai_showdown_details(kc, dc, int(seeds[b]))
        assert (int(k_got[b]), int(d_got[b])) == (k, d), why
        assert set(np.flatnonzero(laid[b]).tolist()) == set(lay), why
        for i, meld in enumerate(mine):  # the knocker's melds, ids in declared order, lay-offs included
            assert {int(meld_id[b, c]) for c in meld} == {i}, why
        assert sorted(len([c for c in dc if meld_id[b, c] == j]) for j in range(len(mine), len(mine) + len(own))) \
            == sorted(len(m) for m in own), why
        laid_off_some += bool(lay)
    assert laid_off_some > 500  # the hands exercise the lay-offs


@pytest.mark.slow  # test_melds checks the showdown against its oracle on random deals in the fast loop
def test_showdown_matches_brute_force() -> None:
    rng = random.Random(14)
    pairs = []
    for _ in range(2500):
        cards = biased_cards(rng, 20)
        pairs.append((cards[:10], cards[10:]))
    sd = melds.showdown(np.stack([mask_of(k) for k, _ in pairs]), np.stack([mask_of(d) for _, d in pairs]))
    kinds = {"gin": 0, "layoff": 0, "set_layoff": 0, "tie_break": 0}
    for b, (kc, dc) in enumerate(pairs):
        why = f"knocker {format_cards(sorted(kc))} | defender {format_cards(sorted(dc))}"
        k, d = reference_showdown(kc, dc)
        if k > 0:  # does the knocker's tie-break matter here?
            kinds["tie_break"] += len({defender_deadwood(a, dc) for a in minimal_arrangements(kc)}) > 1
        assert (int(sd.knocker_deadwood[b]), int(sd.defender_deadwood[b])) == (k, d), why
        # the reported arrangement must be consistent with the reported deadwoods
        mid, laid = sd.meld_id[b], sd.laid_off[b]
        kmask, dmask = mask_of(kc), mask_of(dc)
        assert not (laid & ~dmask).any(), why
        if k == 0:
            kinds["gin"] += 1
            assert not laid.any(), why  # no lay-offs on gin
        groups: dict[int, list[int]] = {}
        for c in range(NUM_CARDS):
            if (kmask[c] or dmask[c]) and mid[c] >= 0:
                groups.setdefault(int(mid[c]), []).append(c)
        knocker_ids = {int(mid[c]) for c in kc if mid[c] >= 0}
        for gid, cards in groups.items():
            owners = {bool(kmask[c]) for c in cards}
            if gid in knocker_ids:  # a knocker meld, maybe with the defender's lay-offs
                assert all(kmask[c] or laid[c] for c in cards), why
                assert is_meld([c for c in cards if kmask[c]]), why
                assert is_meld(cards), why
                if any(laid[c] for c in cards):
                    kinds["layoff"] += 1
                    kinds["set_layoff"] += len({c % NUM_RANKS for c in cards}) == 1
            else:  # a defender meld
                assert owners == {False} and not any(laid[c] for c in cards) and is_meld(cards), why
        assert sum(points(c) for c in kc if mid[c] < 0) == k, why
        assert sum(points(c) for c in dc if mid[c] < 0) == d, why
    assert min(kinds.values()) >= 20, kinds  # the sample exercised each case


# ---------------------------------------------------------------------------------------
# whole episodes, side by side
# ---------------------------------------------------------------------------------------
def rigged_deck(rng: random.Random) -> list[int]:
    """A deck whose twenty dealt cards come from five or six consecutive ranks."""
    nr = rng.choice([5, 6])
    lo = rng.randint(0, NUM_RANKS - nr)
    pool = [s * NUM_RANKS + r for s in range(4) for r in range(lo, lo + nr)]
    head = rng.sample(pool, 20)
    rest = [c for c in range(NUM_CARDS) if c not in head]
    rng.shuffle(rest)
    return head + rest


def uniform_policy(game: ReferenceGame, rng: random.Random) -> int:
    return rng.choice(game.legal_actions())


def greedy_policy(game: ReferenceGame, rng: random.Random, eps: float = 0.15) -> int:
    """Mostly sensible play, so that hands end in knocks, gins and undercuts."""
    legal = game.legal_actions()
    if rng.random() < eps:
        return rng.choice(legal)
    p = game.current_player
    hand = game.hands[p]
    if game.phase in (Phase.OFFER_NONDEALER, Phase.OFFER_DEALER, Phase.DRAW):
        with_top = min(reference_deadwood_after_discard(hand | {game.pile[-1]}).values())
        if with_top < reference_deadwood(hand) and rng.random() < 0.8:
            return TAKE_DISCARD
        return PASS if PASS in legal else DRAW_STOCK
    if game.phase == Phase.FORCED_DRAW:
        return DRAW_STOCK
    knocks = [a for a in legal if KNOCK <= a < DRAW_STOCK]
    if knocks and rng.random() < 0.85:
        return rng.choice(knocks)
    after = reference_deadwood_after_discard(hand)
    discards = [a for a in legal if a < KNOCK]
    best = min(after[a] for a in discards)
    return rng.choice([a for a in discards if after[a] == best])


POLICIES: dict[str, Callable[[ReferenceGame, random.Random], int]] = {
    "uniform": uniform_policy,
    "greedy": greedy_policy,
}

RESULT_FIELDS = ("knocker", "winner", "gin", "undercut", "void", "truncated_hand", "deadwood", "points",
                 "scores", "spade_doubled", "game_over", "game_winner", "upcard", "dealer", "knock_card")


def replay_text(rules: Rules, episode: str, ref: ReferenceGame) -> str:
    lines = [f"rules={rules.to_dict()} episode={episode}"]
    for n, h in enumerate(ref.hand_log):
        lines.append(f"hand {n}: dealer={h['dealer']} deck=[{format_cards(h['deck'])}]")
        lines.append("  actions: " + ", ".join(f"{a} ({action_text(a)})" for a in h["actions"]))
    lines.append(repr(ref))
    return "\n".join(lines)


def check_view(obs: np.ndarray, player: int, ref: ReferenceGame, why: Callable[[], str]) -> None:
    """The engine's observation of ``player`` equals the reference's, field by field."""
    want = ref.observation_fields(player)
    assert list(want) == list(OBS_FIELDS)  # same names, in layout order
    if np.abs(obs - np.concatenate(list(want.values()))).max() <= 1e-6:
        return
    for name, value in want.items():
        got = obs_field(obs, name)
        if not np.allclose(got, value, atol=1e-6):
            raise AssertionError(f"observation field {name} of player {player} differs: "
                                 f"engine {got.tolist()} reference {value.tolist()}\n{why()}")


def crosscheck(rules: Rules, episode: str, policy: str, decks: str, num_games: int, seed: int) -> dict:
    """Play num_games episodes in both implementations; returns outcome counts."""
    rng = random.Random(seed)
    choose = POLICIES[policy]
    deck_list = [rigged_deck(rng) if decks == "rigged" else rng.sample(range(NUM_CARDS), NUM_CARDS)
                 for _ in range(num_games)]
    dealers = [rng.randrange(2) for _ in range(num_games)]
    vg = VectorGame(num_games, rules=rules, episode=episode, seed=seed)
    out = vg.reset(decks=np.array(deck_list), dealers=np.array(dealers))

    def dealt_by_engine(i: int) -> Callable[[], list[int]]:
        return lambda: vg.state.deck[i].tolist()  # later hands of a game: the engine's deal

    refs = [ReferenceGame(rules, deck_list[i], dealers[i], episode, next_deck=dealt_by_engine(i))
            for i in range(num_games)]
    counts: dict[str, int] = {}
    while True:
        active = [i for i in range(num_games) if not refs[i].over]
        if not active:
            break
        # ---- the decision: player, mask, observations of both players
        other = np.where(out.current_player >= 0, 1 - out.current_player, 0)
        other_obs = vg.observe(other)
        for i in active:
            ref = refs[i]
            why = lambda: replay_text(rules, episode, ref)  # noqa: E731
            assert out.current_player[i] == ref.current_player, why()
            legal = np.flatnonzero(out.legal_action_mask[i]).tolist()
            assert legal == ref.legal_actions(), f"engine {legal}\nreference {ref.legal_actions()}\n{why()}"
            assert (vg.state.phase[i], vg.state.turns[i]) == (ref.phase, ref.turns), why()
            for q in (0, 1):
                assert (vg.state.hands[i, q] == mask_of(ref.hands[q])).all(), why()
            check_view(out.observation[i], ref.current_player, ref, why)
            check_view(other_obs[i], int(other[i]), ref, why)
        # ---- the same action in both
        actions = np.zeros(num_games, dtype=np.int64)
        for i in active:
            actions[i] = choose(refs[i], rng)
        out = vg.step(actions)
        for i in active:
            ref = refs[i]
            ref.step(int(actions[i]))
            why = lambda: replay_text(rules, episode, ref)  # noqa: E731
            assert bool(out.hand_over[i]) == ref.hand_over, why()
            assert out.rewards[i].tolist() == ref.last_rewards, f"rewards {out.rewards[i]}\n{why()}"
            assert out.rewards[i].sum() == 0
            assert bool(out.terminated[i]) == (ref.over and ref.terminated), why()
            assert bool(out.truncated[i]) == (ref.over and ref.truncated), why()
            assert vg.state.scores[i].tolist() == ref.scores, why()
            if ref.hand_over:
                r = ref.last_result
                for name in RESULT_FIELDS:
                    got = getattr(out.result, name)[i]
                    got = got.tolist() if isinstance(got, np.ndarray) else got.item()
                    assert got == r[name], f"result.{name}: engine {got} reference {r[name]}\n{why()}"
                for q in (0, 1):
                    assert (out.result.hands[i, q] == mask_of(r["hands"][q])).all(), why()
                kind = ("cap" if r["truncated_hand"] else "wall" if r["void"] else "gin" if r["gin"]
                        else "undercut" if r["undercut"] else "knock")
                counts[kind] = counts.get(kind, 0) + 1
                if r["game_over"]:
                    counts["game"] = counts.get("game", 0) + 1
    return counts


HAND = "hand"
GAME = "game"
# (rules, episode, policy, decks, games) -- roughly 2,500 episodes in all. The quick cases (a
# few seconds together: hand and game, uniform and greedy, shuffled and rigged) run in the fast
# loop (`pytest -m "not slow"`); the rest only in the full suite.
QUICK_CASES = [
    (Rules(max_turns_per_hand=3), HAND, "uniform", "shuffled", 150),
    (Rules(max_turns_per_hand=6), HAND, "greedy", "rigged", 150),
    (Rules(target_score=1, game_bonuses=True, discard_taken_card=True), GAME, "greedy", "shuffled", 60),
    (Rules.eaai(), HAND, "greedy", "rigged", 150),  # the EAAI framework's rules: its showdown, no turn cap
    (replace(Rules.eaai(), target_score=40), GAME, "greedy", "rigged", 30),
]
SLOW_CASES = [
    (Rules(), HAND, "uniform", "shuffled", 200),
    (Rules(), HAND, "greedy", "shuffled", 300),
    (Rules(), HAND, "greedy", "rigged", 300),
    (Rules(knock_limit=10), HAND, "greedy", "rigged", 250),
    (Rules(knock_limit=10, gin_bonus=20, undercut_bonus=25), HAND, "uniform", "rigged", 200),
    (Rules(discard_taken_card=True, spade_double=True), HAND, "greedy", "rigged", 250),
    (Rules(discard_taken_card=True), HAND, "uniform", "shuffled", 150),
    (Rules(knock_limit=0, undercut_bonus=0), HAND, "greedy", "rigged", 150),
    (Rules(target_score=60), GAME, "greedy", "rigged", 60),
    (Rules(target_score=40, next_dealer="loser", spade_double=True), GAME, "greedy", "shuffled", 60),
    (Rules(target_score=40, next_dealer="alternate", game_bonuses=True, knock_limit=10), GAME, "greedy", "rigged", 60),
    (Rules(target_score=25, game_bonuses=True, max_turns_per_hand=8), GAME, "greedy", "rigged", 40),
    (Rules.eaai(), HAND, "uniform", "shuffled", 150),
    (Rules.eaai(), GAME, "greedy", "shuffled", 40),
    (Rules(showdown="eaai", spade_double=True), HAND, "greedy", "rigged", 250),  # Oklahoma with the EAAI showdown
    (Rules(max_turns_per_hand=None, knock_limit=0), HAND, "uniform", "shuffled", 100),
]


def case_id(rules: Rules, episode: str, policy: str, decks: str) -> str:
    changed = ",".join(f"{k}={v}" for k, v in rules.to_dict().items() if v != getattr(Rules(), k))
    return f"{episode}-{policy}-{decks}-{changed or 'default'}"


@pytest.mark.parametrize("rules, episode, policy, decks, games", [
    *(pytest.param(*case, id=case_id(*case[:4])) for case in QUICK_CASES),
    *(pytest.param(*case, id=case_id(*case[:4]), marks=pytest.mark.slow) for case in SLOW_CASES),
])
def test_engine_matches_reference(rules: Rules, episode: str, policy: str, decks: str, games: int) -> None:
    counts = crosscheck(rules, episode, policy, decks, games, seed=games + len(str(rules)))
    assert sum(v for k, v in counts.items() if k != "game") >= games
    if policy == "greedy" and (rules.max_turns_per_hand is None or rules.max_turns_per_hand > 10):
        assert counts.get("knock", 0) + counts.get("gin", 0) + counts.get("undercut", 0) > 0, counts
    if episode == GAME:
        assert counts.get("game", 0) == games, counts
