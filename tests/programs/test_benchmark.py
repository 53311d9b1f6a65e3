"""The benchmark: the frozen scale's placement, the protocol's checks, the report card's command
(docs/benchmark.md). The card is played at tiny counts; the shipped scale is checked for what it
claims (every anchor under both rule sets, its ratings the fit of its own recorded pairs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from okgin.benchmark import card, scale
from okgin.benchmark.protocol import ANCHORS, RULE_SETS, SHIPPED, Protocol, resolve_spec
from okgin.ratings import bradley_terry

ANCHOR_RATINGS = np.array([0.0, 250.0, 330.0, 380.0, 420.0])


@pytest.fixture
def test_scale(tmp_path):
    """A scale file of made-up ratings for the current shipped agent (placement is tested on it)."""
    path = tmp_path / "scale.json"
    path.write_text(json.dumps({
        "format": scale.SCALE_FORMAT, "version": 1, "shipped_sha256": scale.sha256(resolve_spec(SHIPPED)[4:]),
        "rule_sets": {rs: {"ratings": dict(zip(ANCHORS, ANCHOR_RATINGS.tolist()))} for rs in RULE_SETS}}))
    return path


# ------------------------------------------------------------------- placement
@pytest.mark.parametrize("true", [-200.0, 0.0, 333.0, 450.0, 900.0])
def test_placement_recovers_the_rating_behind_expected_results(true):
    p = scale.expected_wins(np.array([true]), ANCHOR_RATINGS)[0]
    hands = np.full((1, 5), 1e9)  # so many hands that the prior's half win and half loss do not count
    assert scale.place(p[None] * hands, hands, ANCHOR_RATINGS)[0] == pytest.approx(true, abs=1e-3)


def test_placement_is_monotone_and_finite_for_a_clean_sweep():
    hands = np.full((3, 5), 1000.0)
    wins = np.stack([np.full(5, 400.0), np.full(5, 600.0), hands[0]])  # the last: every hand won
    r = scale.place(wins, hands, ANCHOR_RATINGS)
    assert r[0] < r[1] < r[2] < ANCHOR_RATINGS.max() + 4000 and np.isfinite(r).all()


def test_placement_interval_holds_the_rating_and_narrows_with_more_deals():
    rng = np.random.default_rng(0)
    widths = []
    for deals in (200, 5000):
        p = scale.expected_wins(np.array([350.0]), ANCHOR_RATINGS)[0]
        wins = rng.binomial(2, p[:, None], size=(5, deals)).astype(float)
        r, (lo, hi) = scale.place_with_ci(wins, np.full((5, deals), 2.0), ANCHOR_RATINGS, reps=300, seed=1)
        assert lo < r < hi and lo < 350 < hi
        widths.append(hi - lo)
    assert widths[1] < widths[0] / 3
    assert scale.place_with_ci(wins, np.full((5, deals), 2.0), ANCHOR_RATINGS, reps=0, seed=1)[1] is None


# ------------------------------------------------------------------- the shipped scale
def test_the_shipped_scale_rates_every_anchor_under_both_rule_sets_from_its_own_pairs():
    s = scale.load_scale()
    assert s["anchors"] == list(ANCHORS) and set(s["rule_sets"]) == set(RULE_SETS)
    assert s["seed"] != Protocol().seed  # the scale was fitted on other deals than the cards play
    for rs, table in s["rule_sets"].items():
        assert table["ratings"]["random"] == 0
        results = [(ANCHORS.index(p["a"]), ANCHORS.index(p["b"]), p["win_rate_a"] * p["hands"], p["hands"])
                   for p in table["pairs"]]
        assert len(results) == len(ANCHORS) * (len(ANCHORS) - 1) // 2
        fit = bradley_terry(list(ANCHORS), results, ANCHORS.index("random"))
        assert [table["ratings"][a] for a in ANCHORS] == pytest.approx(fit, abs=0.01)


def test_a_scale_for_another_shipped_agent_or_version_is_refused(tmp_path, test_scale):
    data = json.loads(test_scale.read_text())
    (tmp_path / "other.json").write_text(json.dumps({**data, "shipped_sha256": "0" * 64}))
    with pytest.raises(scale.ScaleError, match="is not the agent the scale"):
        scale.load_scale(str(tmp_path / "other.json"))
    (tmp_path / "v0.json").write_text(json.dumps({**data, "version": 0}))
    with pytest.raises(scale.ScaleError, match="not a version 1"):
        scale.load_scale(str(tmp_path / "v0.json"))
    with pytest.raises(scale.ScaleError, match="is missing"):
        scale.load_scale(str(tmp_path / "none.json"))


# ------------------------------------------------------------------- the protocol
def test_the_protocol_knows_a_standard_card():
    assert Protocol().is_standard and Protocol(batch=64).is_standard
    assert not Protocol(hands=100).is_standard and not Protocol(rule_sets=("eaai",)).is_standard
    for bad, message in (({"hands": 1}, "hands must be an integer >= 2"), ({"games": -1}, "games must"),
                         ({"rule_sets": ("vegas",)}, "choose among oklahoma, eaai")):
        with pytest.raises(ValueError, match=message):
            Protocol(**bad)


# ------------------------------------------------------------------- the card
@pytest.mark.slow  # two cards of 16 hands against each anchor under both rule sets: ~15 s
def test_a_card_is_played_printed_and_written(tmp_path, test_scale, capsys):
    out = tmp_path / "cards" / "greedy"
    c = card.main(["greedy", "--hands", "16", "--games", "4", "--scale", str(test_scale), "--out", str(out),
                   "--no-progress", "--batch", "8"])
    text = capsys.readouterr().out
    written = json.loads((tmp_path / "cards" / "greedy.json").read_text())
    assert written == json.loads(json.dumps(c)) and written["format"] == "okgin-benchmark-card"
    assert written["version"] == 1 and written["standard"] is False
    for rs in RULE_SETS:
        sec = written["rule_sets"][rs]
        assert [a["anchor"] for a in sec["anchors"]] == list(ANCHORS)
        assert all(a["hands"] == 16 for a in sec["anchors"])
        assert sec["games"]["games"] == 4 and sec["games"]["opponent"] == {"eaai": "eaai_simple",
                                                                              "oklahoma": "expert"}[rs]
        lo, hi = sec["rating"]["ci"]
        assert lo <= sec["rating"]["value"] <= hi
    md = (tmp_path / "cards" / "greedy.md").read_text()
    assert md == card.render_markdown(written) and md.strip() in text
    assert "NOT the standard counts" in md and "| `greedy` |" in md
    # the same seed gives the same card
    again = card.main(["greedy", "--hands", "16", "--games", "4", "--scale", str(test_scale), "--out",
                       str(tmp_path / "again"), "--no-progress", "--batch", "8"])
    def figures(c):  # every anchor's figures but the speed of play
        return [{k: v for k, v in a.items() if k != "hands_per_s"} for rs in RULE_SETS
                for a in c["rule_sets"][rs]["anchors"]]

    assert figures(again) == figures(c)
    assert [again["rule_sets"][rs]["games"] == c["rule_sets"][rs]["games"] for rs in RULE_SETS] == [True, True]
    assert [again["rule_sets"][rs]["rating"] == c["rule_sets"][rs]["rating"] for rs in RULE_SETS] == [True, True]


@pytest.mark.parametrize("argv, message", [
    (["nosuchbot"], "AGENT: unknown agent spec 'nosuchbot'"),
    (["ppo:missing.pt"], "AGENT:"),
    (["random", "--hands", "1"], "--hands must be an integer >= 2"),
    (["random", "--exploit-steps", "-5"], "--exploit-steps must be >= 0"),
    (["random", "--rule-sets", "vegas"], "invalid choice: 'vegas'"),
    (["random", "--scale", "/nonexistent/scale.json"], "--scale: the rating scale /nonexistent/scale.json is missing"),
])
def test_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        card.main(argv)
    assert e.value.code == 2
    assert message in capsys.readouterr().err


def test_an_interrupted_card_writes_nothing(tmp_path, test_scale, monkeypatch):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(card, "match_hands", interrupt)
    monkeypatch.setattr("sys.argv", [card.PROG, "random", "--hands", "4", "--scale", str(test_scale), "--out",
                                     str(tmp_path / "card"), "--no-progress"])
    with pytest.raises(SystemExit, match="interrupted; nothing was written"):
        card.cli()
    assert list(tmp_path.iterdir()) == [test_scale]


def test_safe_names():
    assert card.safe_name(SHIPPED) == "ppo_okgin_ppo" and card.safe_name("mybots:My Bot") == "mybots_My_Bot"


# ------------------------------------------------------------------- cards side by side
def _card(agent: str, eaai_games: float, rating: float) -> dict:
    return {"format": "okgin-benchmark-card", "agent": agent, "standard": True, "rule_sets": {
        "eaai": {"games": {"win_rate": eaai_games, "win_rate_ci": [eaai_games - 0.02, eaai_games + 0.02]},
                 "rating": {"value": rating, "ci": [rating - 5, rating + 5]}}}}


def test_cards_side_by_side_and_over_seeds(tmp_path, capsys):
    from okgin.benchmark import report

    cards = [_card("ppo:runs/b/10m_seed1/checkpoint.pt", 0.60, 400), _card("ppo:runs/b/10m_seed2/checkpoint.pt", 0.64, 410),
             _card("ppo:runs/b/10m_seed3/checkpoint.pt", 0.62, 420), _card("expert", 0.7, 450)]
    rows = report.table(cards)
    assert rows[0] == ["agent", "EAAI: games won vs eaai_simple (%)", "rating (EAAI)"]
    assert rows[-1] == ["`expert`", "70.0 [68.0, 72.0]", "450 [445, 455]"]
    rows = report.table(cards, seeds=True)
    # the mean over three seeds with a t interval (2 df: 4.303 standard errors), then each seed's value
    half = 4.303 * 2.0 / np.sqrt(3)
    assert rows[1] == ["`ppo:runs/b/10m_seed*/checkpoint.pt`", "3", f"62.0 [{62 - half:.1f}, {62 + half:.1f}] (60.0, 64.0, 62.0)",
                       f"410 [{410 - 4.303 * 10 / np.sqrt(3):.0f}, {410 + 4.303 * 10 / np.sqrt(3):.0f}] (400, 410, 420)"]
    assert rows[2][:2] == ["`expert`", "1"] and rows[2][2] == "70.0 (70.0)"
    paths = []
    for k, c in enumerate(cards):
        paths.append(str(tmp_path / f"{k}.json"))
        json.dump(c, open(paths[-1], "w"))
    assert report.main([*paths, "--seeds", "--json", str(tmp_path / "t.json")]) == rows
    assert json.loads((tmp_path / "t.json").read_text()) == rows
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(SystemExit):
        report.main([str(tmp_path / "bad.json")])
    assert "not an okgin-benchmark card" in capsys.readouterr().err


@pytest.mark.slow  # two subprocess cards, one over two processes (gloo on CPU)
def test_a_card_over_two_processes_equals_the_one_process_card(tmp_path, test_scale):
    import subprocess
    import sys

    pytest.importorskip("torch.distributed")
    cards = {}
    for k in (1, 2):
        out = tmp_path / f"k{k}"
        p = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(k),
                            "-m", "okgin.benchmark", "greedy", "--hands", "32", "--games", "8", "--batch", "8",
                            "--scale", str(test_scale), "--out", str(out), "--no-progress"],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        cards[k] = json.loads(out.with_suffix(".json").read_text())
    assert (cards[1]["world_size"], cards[2]["world_size"]) == (1, 2)
    for rs in RULE_SETS:  # randomised anchors over several batches: the same figures, timings aside
        one, two = cards[1]["rule_sets"][rs], cards[2]["rule_sets"][rs]
        assert [{k: v for k, v in a.items() if k != "hands_per_s"} for a in one["anchors"]] == \
            [{k: v for k, v in a.items() if k != "hands_per_s"} for a in two["anchors"]]
        assert one["games"] == two["games"] and one["rating"] == two["rating"]
