"""Language models as okgin agents, through the OpenAI-compatible chat API.

Install the ``llm`` extra in the checkout: ``pip install -e '.[llm]'``.

The spec ``llm:MODEL@BASE_URL[#OPTION=VALUE,...]`` seats a model served by vLLM, llama.cpp's
server, Ollama or a hosted service::

    okgin-evaluate --agents "llm:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1" simple --hands 20
    okgin-evaluate --agents "llm:gpt-4o-mini@https://api.openai.com/v1#timeout=30,concurrency=16" simple

Options after ``#`` (the fragment of a URL is never sent, so it cannot clash with a real base URL):
``key_env`` (the environment variable holding the API key, default ``OPENAI_API_KEY``), ``timeout``
(seconds per request, default 60), ``retries`` (repeats of a request after a timeout, a connection
error, HTTP 429 or 5xx, default 4), ``backoff`` (first wait in seconds, doubled each time, default
1; a 429's ``Retry-After`` is honoured up to ``max_backoff``, default 30), ``reasks`` (re-asks after
an answer that is no legal move, default 2), ``concurrency`` (requests in flight at once, default 8),
``temperature`` (default 0), ``max_tokens`` (default 256) and ``fallback`` (the agent spec whose move
replaces a decision the model did not settle, default ``simple``).

How a decision is made (``LLMAgent.act`` gets a batch of observations, one per game in flight, and
asks for all of them at once on a thread pool of ``concurrency`` workers):

1. A decision with one legal move (the forced draw after both passed) is played without asking.
2. The model gets ``SYSTEM_PROMPT`` (versioned: ``PROMPT_VERSION``, printed in docs/arena.md) and
   the player's view (``okgin_env.text.view.render_view``: from the observation vector and mask
   only, with the legal moves listed by id and words).
3. Its answer is read by ``okgin_env.text.moves.read_answer`` (an id, JSON ``{"move": ...}``, words,
   or the last JSON object / ``[...]`` in a longer answer). An answer that is no legal move is
   *refused*: the model is told why (``REASK_PROMPT``) and asked again, up to ``reasks`` times.
4. A decision still unsettled (every answer refused, or a request that failed after its retries)
   gets the ``fallback`` agent's move (default ``simple``), and is counted.

Every event is counted in ``agent.stats`` (``LLMStats``): requests, retries by cause, answers,
refused answers (``illegal_move_rate`` = refused / answers), re-asks, fallbacks, tokens and
latency. The API key is read from the environment when the agent is made and lives only in the
OpenAI client: it is never logged, never in ``repr``, stats or error messages, and not pickled.
An HTTP error that retrying cannot mend (400, 401, 403, 404, ...) raises ``LLMError``.
"""

from __future__ import annotations

import logging
import os
import random
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np

from okgin_env.text.moves import MoveError, read_answer
from okgin_env.text.view import render_view

from .base import Bot, check_batch

log = logging.getLogger(__name__)

PROMPT_VERSION = 1  #: bump whenever SYSTEM_PROMPT or REASK_PROMPT changes (results record it)
SYSTEM_PROMPT = """\
You are playing Oklahoma Gin, a two-player Gin Rummy, to win.
Rules:
- 52 cards, ace low. Card text: rank A 2 3 4 5 6 7 8 9 T J Q K, then suit s h d c
  (7h = seven of hearts, Ts = ten of spades).
- Melds: 3 or 4 cards of one rank, or 3 or more cards of one suit in sequence. A card belongs to one meld.
- Deadwood: the points of the cards left out of melds (ace 1, number cards their number, T J Q K 10).
- Your view gives the hand's knock limit (in Oklahoma Gin the first upcard sets it: ace 0, gin only;
  2-9 their number; T J Q K 10).
- On the first upcard offer the non-dealer, then the dealer, may take the upcard or pass.
- A turn: take the top card of the stock or of the discard pile, then discard one card, or knock.
  A card taken from the discard pile may not be discarded in the same turn.
- Knock: discard face down and end the hand, allowed when your other ten cards leave deadwood at most
  the knock limit. 0 deadwood is gin. The opponent then lays off cards on your melds (not after gin).
- Scoring: the knocker scores the opponent's deadwood minus its own; gin adds a bonus (25 by default);
  if the opponent's deadwood is not higher than the knocker's, the opponent undercuts and scores the
  difference plus a bonus (10 by default). The hand is void when only two stock cards are left.
Each message shows your view of the table and the legal moves with their ids.
Answer with exactly one legal move as JSON, e.g. {"move": 104}, and nothing else."""
REASK_PROMPT = """\
Your answer was refused: {error}
Answer again with exactly one legal move as JSON, e.g. {{"move": ID}}."""
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
KEY_PLACEHOLDER = "EMPTY"  #: sent when the key variable is unset (local servers such as vLLM take any key)
MAX_LATENCIES = 100_000  #: latencies kept for percentiles (the sum and count cover all)


class LLMError(RuntimeError):
    """A request the server refused in a way retrying cannot mend (bad model, URL, key, request)."""


# ----------------------------------------------------------------------------- options

@dataclass(frozen=True)
class LLMOptions:
    """How the agent talks to the server (the ``#OPTION=VALUE`` part of a spec; module docstring)."""

    key_env: str = DEFAULT_KEY_ENV  #: environment variable that holds the API key
    timeout: float = 60.0  #: seconds per request
    retries: int = 4  #: repeats of one request after a timeout, connection error, 429 or 5xx
    backoff: float = 1.0  #: seconds before the first repeat, doubled each time (plus up to 25 % jitter)
    max_backoff: float = 30.0  #: the longest wait, Retry-After included
    reasks: int = 2  #: re-asks after an answer that is no legal move
    concurrency: int = 8  #: requests in flight at once (games of a batch asked together)
    temperature: float = 0.0
    max_tokens: int = 256  #: a move is a few tokens; room for a short reasoning before it
    fallback: str = "simple"  #: agent spec whose move settles what the model did not

    def __post_init__(self) -> None:
        for name in ("timeout", "backoff", "max_backoff"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(f"llm option {name} must be a number > 0, got {v!r}")
        for name, low in (("retries", 0), ("reasks", 0), ("concurrency", 1), ("max_tokens", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"llm option {name} must be an integer >= {low}, got {v!r}")
        if not isinstance(self.temperature, (int, float)) or not 0 <= self.temperature <= 2:
            raise ValueError(f"llm option temperature must be a number 0-2, got {self.temperature!r}")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.key_env or ""):
            raise ValueError(f"llm option key_env must name an environment variable, got {self.key_env!r}")

    @classmethod
    def parse(cls, text: str) -> "LLMOptions":
        """``'timeout=30,concurrency=16'`` -> options; unknown names and bad values are one-line errors."""
        kinds = {f.name: f.type for f in fields(cls)}
        values: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in text.split(","))):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep or name not in kinds:
                raise ValueError(f"llm option {part!r}: write NAME=VALUE with NAME one of {', '.join(kinds)}")
            kind = kinds[name]
            try:
                values[name] = int(value) if kind == "int" else float(value) if kind == "float" else value.strip()
            except ValueError:
                expected = "an integer" if kind == "int" else "a number"
                raise ValueError(f"llm option {name}={value!r}: expected {expected}") from None
        return cls(**values)


def parse_spec(arg: str) -> tuple[str, str, LLMOptions]:
    """``MODEL@BASE_URL[#OPTIONS]`` (the text after ``llm:``) -> (model, base URL, options)."""
    text, _, opts = (arg or "").partition("#")
    m = re.fullmatch(r"(?P<model>.+?)@(?P<url>https?://\S+)", text.strip())
    if not m:
        raise ValueError(f"agent spec 'llm:{arg}': write llm:MODEL@BASE_URL, e.g. "
                         "llm:Qwen/Qwen2.5-7B-Instruct@http://127.0.0.1:8000/v1 (options after '#': "
                         "llm:MODEL@URL#timeout=30,concurrency=16)")
    return m.group("model"), m.group("url").rstrip("/"), LLMOptions.parse(opts)


# ----------------------------------------------------------------------------- stats

@dataclass
class LLMStats:
    """What an ``LLMAgent`` did, counted over its life (``to_dict`` for reports)."""

    decisions: int = 0  #: moves asked of the agent (rows with a legal move)
    forced: int = 0  #: decisions with one legal move, played without asking
    accepted: int = 0  #: decisions settled by one of the model's answers
    fallbacks: int = 0  #: decisions settled by the fallback agent
    fallbacks_refused: int = 0  #: ... because every answer was refused
    fallbacks_failed: int = 0  #: ... because a request failed after its retries
    answers: int = 0  #: answers received (first answers and answers to re-asks)
    refused: int = 0  #: answers that were no legal move (unreadable or illegal)
    reasks: int = 0  #: re-asks sent after a refused answer
    requests: int = 0  #: HTTP requests sent, repeats included
    retries: int = 0  #: repeats after a timeout, connection error, 429 or 5xx
    timeouts: int = 0
    rate_limited: int = 0  #: HTTP 429 answers
    server_errors: int = 0  #: HTTP 5xx answers
    connection_errors: int = 0
    failed_requests: int = 0  #: requests given up after ``retries`` repeats
    prompt_tokens: int = 0  #: as the server reports them (``usage``)
    completion_tokens: int = 0
    latency_s: float = 0.0  #: summed seconds of the successful requests
    latencies: list[float] = field(default_factory=list, repr=False)  #: each successful request's seconds

    def add(self, **counts: float) -> None:
        for k, v in counts.items():
            setattr(self, k, getattr(self, k) + v)

    @property
    def illegal_move_rate(self) -> float:
        """Refused answers / answers (0.0 before any answer)."""
        return self.refused / self.answers if self.answers else 0.0

    @property
    def fallback_rate(self) -> float:
        """Fallback moves / decisions (0.0 before any decision)."""
        return self.fallbacks / self.decisions if self.decisions else 0.0

    def to_dict(self) -> dict[str, Any]:
        """Every count, the two rates, mean and 50th/95th percentile latency (seconds)."""
        d = {k: v for k, v in asdict(self).items() if k != "latencies"}
        lat = np.array(self.latencies) if self.latencies else np.zeros(1)
        ok = self.requests - self.timeouts - self.rate_limited - self.server_errors - self.connection_errors
        d.update(illegal_move_rate=self.illegal_move_rate, fallback_rate=self.fallback_rate,
                 latency_mean_s=self.latency_s / ok if ok > 0 else 0.0,
                 latency_p50_s=float(np.percentile(lat, 50)), latency_p95_s=float(np.percentile(lat, 95)))
        return d


class _GaveUp(Exception):
    """A request failed after its retries (the decision falls back)."""


# ----------------------------------------------------------------------------- the agent

class LLMAgent(Bot):
    """A language model behind an OpenAI-compatible chat API, as a batched okgin agent (module docstring)."""

    uses_observations = True

    def __init__(self, model: str, base_url: str, options: LLMOptions | None = None, seed: int | None = None,
                 name: str | None = None) -> None:
        try:
            import openai
        except ImportError:
            raise ImportError("the llm agent needs the openai client: pip install -e '.[llm]' in the checkout") \
                from None
        self.model, self.base_url = model, base_url
        self.options = options or LLMOptions()
        self.name = name or f"llm:{model}@{base_url}"
        self.stats = LLMStats()
        self._seed = seed
        self._lock = threading.Lock()
        self._jitter = random.Random(seed)
        self._pool: ThreadPoolExecutor | None = None
        from okgin_env.agent_specs import make_agent

        self.fallback = make_agent(self.options.fallback, seed=seed)
        self._openai = openai
        self._connect()

    def _connect(self) -> None:
        """The OpenAI client, its key read from the environment now (never stored elsewhere)."""
        key = os.environ.get(self.options.key_env)
        if not key:
            if self.options.key_env != DEFAULT_KEY_ENV:
                raise ValueError(f"llm agent {self.name}: the environment variable {self.options.key_env} "
                                 "(option key_env) is not set")
            key = KEY_PLACEHOLDER
        # retries are ours (counted, with backoff), so the client makes none of its own
        self._client = self._openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.options.timeout,
                                           max_retries=0)
        self._secret = key if key != KEY_PLACEHOLDER else None

    def __repr__(self) -> str:
        return (f"LLMAgent(model={self.model!r}, base_url={self.base_url!r}, key_env={self.options.key_env!r}, "
                f"prompt_version={PROMPT_VERSION})")

    def __getstate__(self) -> dict:
        """Pickled without the client, the key or the thread pool (a process re-reads the key variable)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("_client", "_secret", "_pool", "_lock",
                                                                     "_openai")}
        return state

    def __setstate__(self, state: dict) -> None:
        import openai

        self.__dict__.update(state)
        self._lock, self._pool, self._openai = threading.Lock(), None, openai
        self._connect()

    def close(self) -> None:
        """Stop the thread pool and close the HTTP client."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        self._client.close()

    # ------------------------------------------------------------------- acting
    def act(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        obs, mask = check_batch(observations, action_masks)
        out = np.zeros(len(obs), np.int64)  # rows without a legal action (finished games) get 0
        counts = mask.sum(axis=1)
        rows = np.flatnonzero(counts > 0)
        forced = rows[counts[rows] == 1]
        out[forced] = mask[forced].argmax(axis=1)
        ask = rows[counts[rows] > 1]
        self._count(decisions=len(rows), forced=len(forced))
        if len(ask):
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.options.concurrency, thread_name_prefix="okgin-llm")
            decided = list(self._pool.map(lambda i: self._decide(obs[i], mask[i]), ask))
            settled = np.array([a is not None for a in decided], bool)
            out[ask[settled]] = [a for a in decided if a is not None]
            back = ask[~settled]
            if len(back):  # one batched call, in the caller's thread: the fallback's generator stays deterministic
                out[back] = np.asarray(self.fallback.act(obs[back], mask[back]), np.int64)
        return out

    def _count(self, **counts: float) -> None:
        with self._lock:
            self.stats.add(**counts)

    def _decide(self, obs: np.ndarray, mask: np.ndarray) -> int | None:
        """One decision: ask, re-ask after refused answers; None when the fallback must settle it."""
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": render_view(obs, mask)}]
        for attempt in range(self.options.reasks + 1):
            try:
                answer = self._chat(messages)
            except _GaveUp:
                self._count(fallbacks=1, fallbacks_failed=1)
                return None
            try:
                action = read_answer(answer, obs, mask)
            except MoveError as e:
                self._count(answers=1, refused=1)
                log.debug("%s: answer refused (%s)", self.name, self._redact(str(e)))
                if attempt < self.options.reasks:
                    self._count(reasks=1)
                    messages += [{"role": "assistant", "content": answer},
                                 {"role": "user", "content": REASK_PROMPT.format(error=e)}]
                continue
            self._count(answers=1, accepted=1)
            return action
        self._count(fallbacks=1, fallbacks_refused=1)
        log.info("%s: no legal move after %d answers; the fallback %s plays", self.name, self.options.reasks + 1,
                 self.options.fallback)
        return None

    def _chat(self, messages: list[dict]) -> str:
        """The assistant's text, with retries and backoff; ``_GaveUp`` after the last retry fails."""
        o, oa = self.options, self._openai
        for attempt in range(o.retries + 1):
            retry_after = None
            self._count(requests=1)
            t0 = time.perf_counter()
            try:
                reply = self._client.chat.completions.create(
                    model=self.model, messages=messages, temperature=o.temperature, max_tokens=o.max_tokens)
            except oa.APITimeoutError:  # before APIConnectionError, its base class
                self._count(timeouts=1)
                cause = "timeout"
            except oa.APIConnectionError:
                self._count(connection_errors=1)
                cause = "connection error"
            except oa.RateLimitError as e:
                self._count(rate_limited=1)
                cause, retry_after = "HTTP 429", _retry_after(e)
            except oa.APIStatusError as e:
                if e.status_code < 500:
                    raise LLMError(f"{self.name}: HTTP {e.status_code} from the server, which retrying cannot mend "
                                   f"(check the model name, the URL and {o.key_env}): "
                                   f"{self._redact(str(e))[:300]}") from None
                self._count(server_errors=1)
                cause = f"HTTP {e.status_code}"
            else:
                seconds = time.perf_counter() - t0
                usage = getattr(reply, "usage", None)
                with self._lock:
                    self.stats.add(latency_s=seconds, prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                                   completion_tokens=getattr(usage, "completion_tokens", 0) or 0)
                    if len(self.stats.latencies) < MAX_LATENCIES:
                        self.stats.latencies.append(seconds)
                choice = reply.choices[0] if reply.choices else None
                return (choice.message.content or "") if choice is not None else ""
            if attempt == o.retries:
                self._count(failed_requests=1)
                log.warning("%s: request failed after %d tries (last: %s); the fallback plays", self.name,
                            attempt + 1, cause)
                raise _GaveUp
            self._count(retries=1)
            with self._lock:
                jitter = 1.0 + 0.25 * self._jitter.random()
            wait = min(o.max_backoff, max(retry_after or 0.0, o.backoff * 2 ** attempt * jitter))
            log.debug("%s: %s, retry %d in %.2f s", self.name, cause, attempt + 1, wait)
            time.sleep(wait)
        raise AssertionError("unreachable")

    def _redact(self, text: str) -> str:
        """``text`` with the API key (if any) blanked out: servers may echo what they were sent."""
        return text.replace(self._secret, "***") if self._secret else text


def _retry_after(error: Any) -> float | None:
    """Seconds from a 429's ``Retry-After`` header (None when absent or not a number)."""
    try:
        return max(0.0, float(error.response.headers.get("retry-after")))
    except (AttributeError, TypeError, ValueError):
        return None


def make_llm(arg: str | None, seed: int | None) -> LLMAgent:
    """The ``llm:MODEL@BASE_URL[#OPTIONS]`` spec's agent (registered by ``okgin_agents``)."""
    model, url, options = parse_spec(arg or "")
    return LLMAgent(model, url, options, seed=seed, name=f"llm:{model}@{url}")
