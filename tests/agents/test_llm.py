"""The llm: agent against a local OpenAI-compatible server (okgin_agents.llm_stub) that answers with a
scripted player's move, junk, illegal moves, slow answers, 429s and 500s: the counts of every event,
the fallback, the thread pool, the key kept out of logs, and a 10-game match against simple."""

from __future__ import annotations

import json
import logging
import pickle
import time

import numpy as np
import pytest

pytest.importorskip("openai")

import okgin_agents  # noqa: E402
from okgin_agents.llm import PROMPT_VERSION, REASK_PROMPT, SYSTEM_PROMPT, LLMAgent, LLMError, LLMOptions  # noqa: E402
from okgin_agents.llm_stub import StubServer, scripted_move  # noqa: E402
from okgin_env import VectorGame  # noqa: E402
from okgin_env.text import render_view  # noqa: E402

SECRET = "sk-okgin-test-0123456789-DO-NOT-LOG"


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)


def positions(n: int, seed: int = 0, steps: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Observations and masks of the players to move in ``n`` games after ``steps`` simple moves
    (every row has a choice of at least two moves)."""
    game, bot = VectorGame(4 * n, seed=seed), okgin_agents.make("simple", seed=seed)
    out = game.reset()
    for _ in range(steps):
        out = game.step(bot.act(out.observation, out.legal_action_mask))
    keep = np.flatnonzero(out.legal_action_mask.sum(axis=1) > 1)[:n]
    assert len(keep) == n
    return out.observation[keep], out.legal_action_mask[keep]


def agent_for(stub: StubServer, **options) -> LLMAgent:
    opts = {"backoff": 0.01, "max_backoff": 0.05, "timeout": 5.0, **options}
    return okgin_agents.make(f"llm:stub@{stub.url}#" + ",".join(f"{k}={v}" for k, v in opts.items()), seed=0)


def legal(actions: np.ndarray, masks: np.ndarray) -> bool:
    return bool(masks[np.arange(len(actions)), actions].all())


def test_a_good_model_settles_every_decision_with_one_request():
    obs, mask = positions(6)
    with StubServer() as stub:
        agent = agent_for(stub)
        actions = agent.act(obs, mask)
    assert legal(actions, mask)
    expected = [scripted_move(render_view(o, m))[0] for o, m in zip(obs, mask)]
    assert list(actions) == expected
    s = agent.stats
    assert (s.decisions, s.accepted, s.requests, s.answers, s.refused, s.fallbacks, s.retries) == (6, 6, 6, 6, 0, 0, 0)
    assert s.prompt_tokens > 0 and s.completion_tokens > 0 and len(s.latencies) == 6 and s.latency_s > 0
    req = stub.requests[0]
    assert req["model"] == "stub" and req["authorized"]
    assert req["messages"][0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert "Legal moves" in req["messages"][1]["content"]


def test_a_forced_move_is_played_without_asking():
    game = VectorGame(1, seed=0)
    out = game.reset()
    out = game.step(np.array([106]))
    out = game.step(np.array([106]))  # both passed: only the stock draw is legal
    assert out.legal_action_mask[0].sum() == 1
    with StubServer() as stub:
        agent = agent_for(stub)
        assert agent.act(out.observation, out.legal_action_mask)[0] == 104
    assert (agent.stats.forced, agent.stats.requests, len(stub.requests)) == (1, 0, 0)


@pytest.mark.parametrize("bad", ["junk", "illegal"])
def test_a_refused_answer_is_re_asked_with_the_reason(bad):
    obs, mask = positions(1)
    with StubServer(script=[bad, "words"]) as stub:
        agent = agent_for(stub)
        action = agent.act(obs, mask)[0]
    assert action == scripted_move(render_view(obs[0], mask[0]))[0]
    s = agent.stats
    assert (s.answers, s.refused, s.reasks, s.accepted, s.fallbacks) == (2, 1, 1, 1, 0)
    assert s.illegal_move_rate == 0.5
    second = stub.requests[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[3]["content"].startswith("Your answer was refused: ") and "Allowed:" in second[3]["content"]


def test_a_model_that_never_answers_legally_gets_the_fallback_move_counted():
    obs, mask = positions(3)
    with StubServer(default="junk") as stub:
        agent = agent_for(stub, reasks=2)
        actions = agent.act(obs, mask)
    assert list(actions) == list(okgin_agents.make("simple", seed=0).act(obs, mask))
    s = agent.stats
    assert (s.answers, s.refused, s.reasks, s.fallbacks, s.fallbacks_refused, s.accepted) == (9, 9, 6, 3, 3, 0)
    assert s.illegal_move_rate == 1.0 and s.fallback_rate == 1.0
    assert len(stub.requests) == 9


def test_429_and_500_are_retried_with_backoff_and_counted():
    obs, mask = positions(1)
    with StubServer(script=[429, 500, 503]) as stub:
        agent = agent_for(stub, retries=4, backoff=0.05, max_backoff=1.0)
        t0 = time.perf_counter()
        action = agent.act(obs, mask)[0]
        waited = time.perf_counter() - t0
    s = agent.stats
    assert (s.requests, s.retries, s.rate_limited, s.server_errors, s.accepted, s.failed_requests) == (4, 3, 1, 2, 1, 0)
    assert waited >= 0.05 + 0.1 + 0.2  # 0.05 s doubled each time (Retry-After: 0 does not shorten it)
    assert mask[0, action]


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_a_slow_answer_times_out_and_is_retried():
    obs, mask = positions(1)
    with StubServer(script=["slow"], slow_seconds=3.0) as stub:
        agent = agent_for(stub, timeout=0.5)
        action = agent.act(obs, mask)[0]
    s = agent.stats
    assert (s.timeouts, s.retries, s.requests, s.accepted) == (1, 1, 2, 1) and mask[0, action]


def test_requests_that_keep_failing_fall_back_after_the_last_retry():
    obs, mask = positions(2)
    with StubServer(default=500) as stub:
        agent = agent_for(stub, retries=2)
        actions = agent.act(obs, mask)
    s = agent.stats
    assert (s.requests, s.retries, s.server_errors, s.failed_requests, s.fallbacks, s.fallbacks_failed) == \
        (6, 4, 6, 2, 2, 2)
    assert s.answers == 0 and legal(actions, mask)


def test_several_games_are_asked_at_once():
    obs, mask = positions(8)
    assert len(obs) == 8
    with StubServer(delay=0.4) as stub:
        agent = agent_for(stub, concurrency=8)
        t0 = time.perf_counter()
        agent.act(obs, mask)
        wall = time.perf_counter() - t0
    assert stub.max_in_flight >= 4 and wall < 8 * 0.4 * 0.75, (stub.max_in_flight, wall)  # one at a time: 3.2 s


@pytest.mark.slow  # about a second: the fast loop (-m 'not slow') stays under a minute
def test_the_api_key_is_sent_but_never_logged_shown_or_pickled(caplog):
    caplog.set_level(logging.DEBUG)  # every logger: okgin's, openai's and its HTTP client's
    obs, mask = positions(2)
    with StubServer(script=[429, 500, "junk", "junk", "junk", "slow"], slow_seconds=2.0) as stub:
        agent = agent_for(stub, timeout=0.5, reasks=2, concurrency=1)  # one decision at a time: the script's order
        agent.act(obs, mask)
        assert all(r["authorized"] for r in stub.requests)
    with StubServer(default=401) as stub:
        bad = agent_for(stub)
        with pytest.raises(LLMError, match="HTTP 401") as e:
            bad.act(obs, mask)
    texts = [caplog.text, repr(agent), str(agent.stats), json.dumps(agent.stats.to_dict()), str(e.value),
             repr(agent.options), agent.name]
    assert caplog.text  # the test saw the logs it searches
    for text in texts:
        assert SECRET not in text
    assert SECRET.encode() not in pickle.dumps(agent)
    s = agent.stats
    assert (s.fallbacks_refused, s.rate_limited, s.server_errors, s.timeouts, s.accepted) == (1, 1, 1, 1, 1)
    clone = pickle.loads(pickle.dumps(agent))
    assert clone.model == "stub" and clone.stats.requests == agent.stats.requests


def test_specs_and_options_are_checked():
    with StubServer() as stub:
        agent = okgin_agents.make(f"llm:org/model-7b@{stub.url}#timeout=9,reasks=1,concurrency=3,fallback=random")
        assert (agent.model, agent.base_url) == ("org/model-7b", stub.url)
        assert agent.options == LLMOptions(timeout=9.0, reasks=1, concurrency=3, fallback="random")
        assert agent.name == f"llm:org/model-7b@{stub.url}" and "key" not in agent.name
        for spec, match in [("llm:", "needs a value"), ("llm:model", "write llm:MODEL@BASE_URL"),
                            ("llm:m@ftp://host/v1", "write llm:MODEL@BASE_URL"),
                            (f"llm:m@{stub.url}#bogus=1", "NAME one of key_env, timeout"),
                            (f"llm:m@{stub.url}#timeout=soon", "expected a number"),
                            (f"llm:m@{stub.url}#reasks=-1", "reasks must be an integer >= 0"),
                            (f"llm:m@{stub.url}#key_env=OKGIN_UNSET_KEY_VAR", "OKGIN_UNSET_KEY_VAR .* is not set")]:
            with pytest.raises(ValueError, match=match):
                okgin_agents.make(spec)
    assert "llm:MODEL@BASE_URL" in okgin_agents.SPECS or "llm:MODEL@BASE_URL" in okgin_agents.registered_specs()


def test_the_prompt_is_versioned_and_printed_in_the_docs():
    from conftest import ROOT

    page = (ROOT / "docs" / "arena.md").read_text()
    assert f"PROMPT_VERSION = {PROMPT_VERSION}" in page
    assert SYSTEM_PROMPT in page and REASK_PROMPT.format(error="{error}") in page


@pytest.mark.slow  # about a minute: some 1,600 requests over HTTP
def test_a_10_game_match_against_simple_through_evaluates_api():
    """The match the docs show: llm:stub against simple over 10 full games on duplicate deals, with a
    model that answers junk to its first 40 requests (so some moves are re-asked, some fall back)."""
    from okgin.evaluate import play_games

    with StubServer(script=["junk"] * 40) as stub:
        agent = okgin_agents.make(f"llm:stub@{stub.url}", seed=0)
        result = play_games(agent, okgin_agents.make("simple", seed=1), 10, seed=0, batch=10)
    s = agent.stats
    print(f"\n{agent.name} vs simple, {result.games} games: win rate {result.win_rate:.2f}, "
          f"{s.refused} of {s.answers} answers refused (illegal-move rate {s.illegal_move_rate:.3f}), "
          f"{s.fallbacks} fallback moves of {s.decisions} decisions, {s.requests} requests")
    assert result.games == 10 and result.wins_a + result.wins_b + result.unfinished == 10
    assert s.refused == 40 and s.answers == s.requests >= 40 and s.decisions > 100
    assert s.fallbacks_refused == s.fallbacks and s.fallbacks <= 40 // 3


@pytest.mark.slow  # a few seconds: some 100 requests
def test_evaluate_reports_a_models_refusals_and_fallbacks(tmp_path, capsys):
    from okgin.evaluate import main

    with StubServer(script=["junk"] * 3) as stub:
        spec = f"llm:stub@{stub.url}#concurrency=1"
        report = main(["--agents", spec, "simple", "--hands", "4", "--no-progress", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr().out
    (st,) = report["agent_stats"]
    assert st["agent"] == spec and st["refused"] == 3 and st["fallbacks"] == 1 and st["decisions"] > 10
    assert f"{spec}: 3 of {st['answers']} answers refused" in out and "1 fallback moves" in out
    assert json.loads((tmp_path / "r.json").read_text())["agent_stats"][0]["refused"] == 3
    bots = main(["--agents", "simple", "random", "--hands", "2", "--no-progress"])
    assert "agent_stats" not in bots  # a run of bots writes the keys it wrote before
