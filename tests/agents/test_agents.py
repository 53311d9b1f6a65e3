"""The agents: one batched interface, legal play everywhere, no hidden state, and worked
examples of each baseline's policy.

Scenarios are real deals: ``deck_from`` lays out the non-dealer's and the dealer's hands and
the upcard, so the first decision of the hand (the non-dealer's upcard offer) and, after a
take, its discard are the situations under test.
"""

from __future__ import annotations

import copy
import re

import numpy as np
import okgin_agents as agents
import pytest
from okgin_agents.base import check_batch
from okgin_agents.expert import ExpertAgent

from okgin_env import OBS_SIZE, VectorGame, obs_field
from okgin_env.game.actions import KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_text
from okgin_env.game.cards import NUM_CARDS, deck_from, parse_card, parse_cards
from okgin_env.game.core import Phase
from okgin_env.game.melds import deadwood_after_discard
from okgin_env.game.observation import DEADWOOD_SCALE, STOCK_SCALE
from okgin_env.game.rules import Rules

BASELINES = list(agents.BASELINES)  #: the bundled bots that need no file, from the registry (okgin_agents)
NONDEALER, DEALER = 1, 0  # player ids in the scripted deals (dealer = 0)


def first_decision(deck: list[int], rules: Rules | None = None):
    """A one-game VectorGame at the non-dealer's upcard offer."""
    game = VectorGame(1, rules)
    return game, game.reset(decks=deck, dealers=DEALER)


def act(spec: str, out) -> int:
    return int(agents.make(spec, seed=0).act(out.observation, out.legal_action_mask)[0])


# ----------------------------------------------------------------------- interface

def test_make_knows_every_spec_and_lists_them_on_error():
    for spec in BASELINES:
        bot = agents.make(spec, seed=1)
        assert isinstance(bot, agents.Agent) and bot.name == spec
    assert BASELINES and set(BASELINES) <= set(agents.SPECS)  # every bundled bot is a spec make() knows
    with pytest.raises(ValueError, match=re.escape("valid specs: " + ", ".join(agents.SPECS))):
        agents.make("grandmaster")
    with pytest.raises(ValueError, match="checkpoint path"):
        agents.make("ppo:")


def test_make_ppo_with_a_missing_checkpoint_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.pt"
    with pytest.raises((ValueError, FileNotFoundError), match="nope.pt|agents/ppo.py"):
        agents.make(f"ppo:{missing}")


@pytest.mark.parametrize("spec", BASELINES)
def test_act_shapes_and_dtype(spec):
    game = VectorGame(64, seed=3)
    out = game.reset()
    bot = agents.make(spec, seed=0)
    actions = bot.act(out.observation, out.legal_action_mask)
    assert actions.shape == (64,) and actions.dtype == np.int64
    empty = bot.act(np.zeros((0, OBS_SIZE), np.float32), np.zeros((0, NUM_ACTIONS), bool))
    assert empty.shape == (0,) and empty.dtype == np.int64


@pytest.mark.parametrize("spec", [s for s in BASELINES if s != "random"])  # okgin_env's RandomAgent is no Bot
def test_act_on_rows_is_act_on_the_copied_rows(spec):
    # a batched caller (okgin_trainer.matches.act_rows) hands a bot the whole batch and its rows: the
    # same actions and the same draws as act on the rows copied out, whether or not the bot reads them in place
    game = VectorGame(128, seed=4, autoreset=True)
    out = game.reset()
    for _ in range(5):  # offers, draws and discards in the batch
        out = game.step(agents.make("greedy").act(out.observation, out.legal_action_mask))
    rows = np.flatnonzero(np.arange(128) % 3 != 1)
    copied, in_place = agents.make(spec, seed=6), agents.make(spec, seed=6)
    for _ in range(2):  # and the generator moves alike
        np.testing.assert_array_equal(in_place.act_on_rows(out.observation, out.legal_action_mask, rows),
                                      copied.act(out.observation[rows], out.legal_action_mask[rows]))
    assert in_place.act_on_rows(out.observation, out.legal_action_mask, rows[:0]).shape == (0,)


def test_bad_rows_are_clear_errors():
    obs, mask = np.zeros((2, OBS_SIZE), np.float32), np.ones((2, NUM_ACTIONS), bool)
    bot = agents.make("simple", seed=0)
    for rows in (np.array([0, 2]), np.array([-1]), np.array([[0]]), np.array([0.5])):
        with pytest.raises(ValueError, match="rows must"):
            bot.act_on_rows(obs, mask, rows)


def test_bad_batches_are_clear_errors():
    obs, mask = np.zeros((2, OBS_SIZE), np.float32), np.ones((2, NUM_ACTIONS), bool)
    with pytest.raises(ValueError, match="observations must have shape"):
        check_batch(obs[:, :10], mask)
    with pytest.raises(ValueError, match="action_masks must have shape"):
        check_batch(obs, mask[:1])


@pytest.mark.parametrize("spec", BASELINES)
def test_finished_games_in_the_batch_are_harmless(spec):
    """A whole VectorGame batch can be passed until every game is over (finished rows have
    no legal action; their actions are ignored)."""
    game = VectorGame(32, seed=2)
    out = game.reset()
    bot = agents.make(spec, seed=0)
    for _ in range(2000):
        if out.terminated.all() or (out.current_player < 0).all():
            break
        out = game.step(bot.act(out.observation, out.legal_action_mask))
    assert (out.current_player < 0).all()


def play_mixed(rules: Rules, episode: str, steps: int, seed: int) -> int:
    """Every baseline against every other (seats drawn per game) in 256 autoreset games;
    asserts each chosen action is marked legal; returns the number of hands finished."""
    bots = [agents.make(spec, seed=seed + i) for i, spec in enumerate(BASELINES)]
    n = 256
    game = VectorGame(n, rules, episode=episode, autoreset=True, seed=seed)
    out = game.reset()
    rng = np.random.default_rng(seed)
    seats = rng.integers(0, len(bots), (n, 2))
    hands = 0
    for _ in range(steps):
        actions = np.zeros(n, np.int64)
        who = seats[np.arange(n), out.current_player]
        for i, bot in enumerate(bots):
            rows = np.flatnonzero(who == i)
            if len(rows):
                actions[rows] = bot.act(out.observation[rows], out.legal_action_mask[rows])
        legal = out.legal_action_mask[np.arange(n), actions]
        assert legal.all(), f"{BASELINES[who[~legal][0]]} played {action_text(actions[~legal][0])}"
        out = game.step(actions)
        finished = out.hand_over
        seats[finished] = rng.integers(0, len(bots), (int(finished.sum()), 2))
        hands += int(finished.sum())
    return hands


@pytest.mark.parametrize("rules, episode", [
    (Rules(), "hand"),
    (Rules(knock_limit=0), "hand"),  # gin only: long hands, walls
    (Rules(knock_limit=10, discard_taken_card=True), "hand"),
    (Rules(target_score=60, spade_double=True, next_dealer="alternate"), "game"),
])
def test_baselines_only_play_legal_actions(rules, episode):
    assert play_mixed(rules, episode, steps=300, seed=7) > 1000


# ------------------------------------------------------------------- hidden state

def hide_differently(game: VectorGame, rng: np.random.Generator) -> VectorGame:
    """A copy of the game whose hidden cards differ: in every game the cards the player to
    move cannot see (the opponent's cards not taken from the pile, and the stock) are dealt
    out again in a new order."""
    twin = copy.deepcopy(game)
    s = twin.state
    for i in np.flatnonzero(s.current_player >= 0):
        opp = 1 - s.current_player[i]
        hidden = np.flatnonzero(s.hands[i, opp] & ~s.taken[i, opp])
        stock = s.deck[i, s.stock_next[i]:].astype(np.int64)
        pool = rng.permutation(np.concatenate([hidden, stock]))
        s.hands[i, opp, hidden] = False
        s.hands[i, opp, pool[:len(hidden)]] = True
        s.deck[i, s.stock_next[i]:] = pool[len(hidden):]
    return twin


@pytest.mark.parametrize("spec", BASELINES)
def test_actions_depend_only_on_what_the_player_may_know(spec):
    """Games that differ only in hidden cards give the same observation and the same action."""
    rng = np.random.default_rng(11)
    game = VectorGame(128, seed=5, autoreset=True)
    out = game.reset()
    driver = agents.make("simple", seed=2)
    changed = 0
    for step in range(40):
        if step % 8 == 7:  # compare at several moments of the hands
            twin = hide_differently(game, rng)
            changed += int((twin.state.hands != game.state.hands).any(axis=(1, 2)).sum())
            players = np.maximum(out.current_player, 0)
            obs, twin_obs = game.observe(players), twin.observe(players)
            np.testing.assert_array_equal(obs, twin_obs)
            a = agents.make(spec, seed=9).act(obs, out.legal_action_mask)
            b = agents.make(spec, seed=9).act(twin_obs, twin.legal_action_mask)
            np.testing.assert_array_equal(a, b)
        out = game.step(driver.act(out.observation, out.legal_action_mask))
    assert changed > 300  # the twins really had different hidden cards


@pytest.mark.parametrize("spec", ["greedy", "expert"])
def test_deterministic_agents_act_row_by_row(spec):
    """Rows are independent: any order, any batch split gives the same actions, call after call."""
    game = VectorGame(96, seed=4, autoreset=True)
    out = game.reset()
    driver = agents.make("random", seed=1)
    obs, masks = [], []
    for _ in range(30):
        obs.append(out.observation)
        masks.append(out.legal_action_mask)
        out = game.step(driver.act(out.observation, out.legal_action_mask))
    obs, masks = np.concatenate(obs), np.concatenate(masks)
    bot = agents.make(spec)
    whole = bot.act(obs, masks)
    perm = np.random.default_rng(0).permutation(len(obs))
    np.testing.assert_array_equal(bot.act(obs[perm], masks[perm]), whole[perm])
    np.testing.assert_array_equal(np.concatenate([bot.act(obs[i:i + 7], masks[i:i + 7])
                                                  for i in range(0, len(obs), 7)]), whole)


@pytest.mark.parametrize("spec", ["random", "simple"])
def test_randomised_agents_follow_their_seed(spec):
    game = VectorGame(256, seed=8, autoreset=True)
    out = game.reset()
    out = game.step(agents.make("simple", seed=0).act(out.observation, out.legal_action_mask))
    for _ in range(3):  # get to discard decisions, where ties and choices exist
        out = game.step(agents.make("greedy").act(out.observation, out.legal_action_mask))
    a = agents.make(spec, seed=5).act(out.observation, out.legal_action_mask)
    b = agents.make(spec, seed=5).act(out.observation, out.legal_action_mask)
    np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------ worked examples: draw

# The non-dealer holds 7-8h, A-2-3s, 4-4 and junk K-Q-Jc... ; the upcard varies.
HAND = "7h 8h As 2s 3s 4c 4d Kc Qd Jh"
JUNK = "Ks Kh Qs 9c 9d 6s 6c 5h 2d 3c"  # the dealer's hand


@pytest.mark.parametrize("upcard, simple, greedy", [
    ("9h", TAKE_DISCARD, TAKE_DISCARD),  # 7-8-9h: a meld, both take
    ("4h", TAKE_DISCARD, TAKE_DISCARD),  # 4-4-4: a meld
    ("Ah", PASS, TAKE_DISCARD),  # no meld, but swapping Kc for an ace lowers deadwood by 9
    ("Tc", PASS, PASS),  # nothing
])
def test_upcard_offer(upcard, simple, greedy):
    """The simple player takes only melding cards; greedy takes anything that lowers its deadwood."""
    _, out = first_decision(deck_from(HAND, JUNK, upcard))
    assert obs_field(out.observation, "phase")[0].argmax() == Phase.OFFER_NONDEALER
    assert act("simple", out) == simple
    assert act("greedy", out) == greedy


def test_simple_discards_its_highest_ranked_deadwood():
    """After taking 9h onto 7-8h the deadwood is 4c 4d Kc Qd Jh (38). Throwing K, Q or J all
    leave 28: the simple player throws the highest rank (Kc); greedy, tied on points too, the
    highest card index (Kc as well). The 9h just taken may not be thrown."""
    game, out = first_decision(deck_from(HAND, JUNK, "9h"))
    out = game.step([TAKE_DISCARD])
    assert not out.legal_action_mask[0, parse_card("9h")]
    assert act("simple", out) == parse_card("Kc")
    assert act("greedy", out) == parse_card("Kc")


@pytest.mark.parametrize("spec", ["greedy", "simple", "expert"])
def test_knock_as_soon_as_possible(spec):
    """The upcard 7h (knock limit 7) completes 5-6-7-8h; with 9-9-9-9 the hand keeps Ad 2c:
    deadwood 3 after throwing Kc. Everyone takes and knocks at once -- the expert too, as no
    single draw can meld both Ad and 2c, so there is no gin to play on for."""
    deck = deck_from("5h 6h 8h 9c 9d 9s 9h Ad 2c Kc", "Ks Qh Qs Jd Tc 8d 7s 6c 4c 3d", "7h")
    game, out = first_decision(deck)
    assert act(spec, out) == TAKE_DISCARD
    out = game.step([TAKE_DISCARD])
    assert act(spec, out) == KNOCK + parse_card("Kc")


@pytest.mark.parametrize("spec", ["greedy", "simple", "expert"])
def test_take_the_upcard_and_go_gin(spec):
    """9s joins 9c 9d: A-2-3-4s 5-6-7h 9-9-9 is gin after throwing Kc face down."""
    deck = deck_from("As 2s 3s 4s 5h 6h 7h 9c 9d Kc", "Ks Qh Qs Jd Tc 8d 7s 6c 4c 3d", "9s")
    game, out = first_decision(deck)
    assert act(spec, out) == TAKE_DISCARD
    out = game.step([TAKE_DISCARD])
    assert act(spec, out) == KNOCK + parse_card("Kc")
    assert game.step([KNOCK + parse_card("Kc")]).result.gin[0]


# ------------------------------------------------------------ worked examples: expert

def discard_observation(hand: str, opp_taken: str = "", buried: str = "", top: str | None = None,
                        knock_limit: int = 10, stock: int = 20) -> tuple[np.ndarray, np.ndarray]:
    """(1, OBS_SIZE) observation and mask of an 11-card discard decision, built field by field."""
    obs = np.zeros((1, OBS_SIZE), np.float32)
    cards = parse_cards(hand)
    obs_field(obs, "own_hand")[0, cards] = 1
    if top:
        obs_field(obs, "discard_top")[0, parse_card(top)] = 1
    obs_field(obs, "pile_buried")[0, parse_cards(buried)] = 1
    obs_field(obs, "opp_taken")[0, parse_cards(opp_taken)] = 1
    held = np.zeros((1, NUM_CARDS), bool)
    held[0, cards] = True
    after = deadwood_after_discard(held)[0]
    obs_field(obs, "discard_deadwood")[0, cards] = (DEADWOOD_SCALE - after[cards]) / DEADWOOD_SCALE
    obs_field(obs, "knock_limit")[0, knock_limit] = 1
    obs_field(obs, "stock_size")[0, 0] = stock / STOCK_SCALE
    obs_field(obs, "phase")[0, Phase.DISCARD] = 1
    mask = np.zeros((1, NUM_ACTIONS), bool)
    mask[0, cards] = True
    mask[0, KNOCK + np.array(cards)[after[cards] <= knock_limit]] = True
    return obs, mask


def test_expert_does_not_feed_the_opponent():
    """Melds A-2-3s 4-5-6d 7-8-9c; deadwood Kh and Ts, 10 points each, neither with outs of
    its own. The opponent took Jh and Qh from the pile, so Kh would make its run: the expert
    throws Ts. Simple breaks the tie by rank and throws the king."""
    obs, mask = discard_observation("As 2s 3s 4d 5d 6d 7c 8c 9c Kh Ts", opp_taken="Jh Qh", knock_limit=5)
    assert agents.make("expert").act(obs, mask)[0] == parse_card("Ts")
    assert agents.make("simple", seed=0).act(obs, mask)[0] == parse_card("Kh")


def test_expert_keeps_the_pair_with_live_outs():
    """Melds A-2-3s 4-5-6d; pairs Kh Kc and Qd Qs; 2c. Both queens that would make the set
    are buried in the pile, both kings are unseen: the expert keeps the kings and throws a
    queen. Simple sees only points and rank and throws a king."""
    obs, mask = discard_observation("As 2s 3s 4d 5d 6d Kh Kc Qd Qs 2c", buried="Qh Qc", knock_limit=3)
    assert agents.make("expert").act(obs, mask)[0] in parse_cards("Qd Qs")
    assert agents.make("simple", seed=0).act(obs, mask)[0] in parse_cards("Kh Kc")


def test_expert_plays_on_for_a_likely_gin_early():
    """A-2-3s 4-5-6d 7-8-9c Ac Kh, knock limit 10: throwing Kh leaves deadwood 1, so it may
    knock. But five of the 41 unseen cards (4s, 3d, 7d, 6c, Tc) extend a meld and give gin
    on the next draw, better than one in ten: with 25 cards in the stock the expert throws Kh
    and plays on; simple knocks. With 6 cards left the expert knocks too."""
    hand = "As 2s 3s 4d 5d 6d 7c 8c 9c Ac Kh"
    obs, mask = discard_observation(hand, knock_limit=10, stock=25)
    assert mask[0, KNOCK + parse_card("Kh")]
    assert agents.make("simple", seed=0).act(obs, mask)[0] == KNOCK + parse_card("Kh")
    assert agents.make("expert").act(obs, mask)[0] == parse_card("Kh")
    obs, mask = discard_observation(hand, knock_limit=10, stock=6)
    assert agents.make("expert").act(obs, mask)[0] == KNOCK + parse_card("Kh")


def test_expert_params_are_a_dataclass():
    bot = ExpertAgent()
    assert bot.params.meld_weight > 0
    assert bot._p.shape == (len(bot.params.to_array()),)
