"""One Agent protocol, one registry, one ``make_agent``: a name gives the same agent whatever was imported first.

Before, ``"random"`` was okgin_env's ``RandomPolicy`` until ``import okgin_agents`` re-registered it as
``RandomAgent``: the same spec built another class depending on import order. Each check here runs in
fresh interpreters (imports cannot be undone in this one), in both orders.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import okgin_agents as agents
import okgin_env
from okgin_env.agent_specs import (
    Agent,
    RandomAgent,
    make_agent,
    register_agent,
    saved_file,
    unreadable_file_error,
)

#: prints {spec: [class, first actions of the seeded agent on all-legal masks]} for every bare name the
#: registry knows (plus search), made ``when`` = "env-first" (before and after importing okgin_agents)
#: or "agents-first"
PROBE = r"""
import json, sys
import numpy as np
when = sys.argv[1]
if when == "agents-first":
    import okgin_agents
from okgin_env.agent_specs import make_agent, registered_specs

def made(spec):
    agent = make_agent(spec, seed=7)
    cls = type(agent)
    row = []
    if spec == "random":  # its draws: the seeded results depend on them
        mask = np.zeros((6, 107), bool); mask[:, [3, 17, 104, 105]] = True
        row = [int(a) for a in agent.act(np.zeros((6, 0), np.float32), mask)]
    return [cls.__module__ + "." + cls.__qualname__, row]

out = {}
if when == "env-first":
    out["random (before okgin_agents)"] = made("random")
    assert "okgin_agents" not in sys.modules, "making 'random' imported the bots"
    import okgin_agents
names = [s for s in registered_specs() if s.isidentifier()] + ["search"]
out.update({name: made(name) for name in names})
print(json.dumps(out))
"""


def _probe(when: str) -> dict:
    run = subprocess.run([sys.executable, "-c", PROBE, when], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_every_name_gives_the_same_agent_in_either_import_order():
    env_first, agents_first = _probe("env-first"), _probe("agents-first")
    before = env_first.pop("random (before okgin_agents)")
    assert before == env_first["random"] == agents_first["random"]
    assert before[0] == "okgin_env.agent_specs.RandomAgent"
    assert before[1] and set(before[1]) <= {3, 17, 104, 105}
    assert env_first == agents_first
    assert {"random", "greedy", "simple", "expert", "search"} <= set(env_first)


def test_one_protocol_one_random_one_make():
    assert agents.make is make_agent is okgin_env.make_agent  # okgin_agents.make: the README's name for it
    assert agents.RandomAgent is RandomAgent is okgin_env.RandomAgent
    assert agents.Agent is Agent is okgin_env.Agent
    assert agents.BASELINES["random"] is RandomAgent
    for spec in agents.BASELINES:
        assert isinstance(agents.make(spec, seed=0), Agent), spec

    class Plain:  # a user's agent needs no base class: the protocol is the act method
        def act(self, observations, action_masks):
            return np.zeros(len(action_masks), np.int64)

    assert isinstance(Plain(), Agent) and not isinstance(object(), Agent)


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="'random' is already registered by okgin_env.agent_specs"):
        register_agent("random", lambda arg, seed: RandomAgent(seed))
    with pytest.raises(ValueError, match="'simple' is already registered by okgin_agents"):
        register_agent("Simple ", lambda arg, seed: RandomAgent(seed))
    assert type(make_agent("simple", seed=0)) is agents.SimpleAgent


def test_random_checks_its_masks_and_keeps_its_draws():
    mask = np.zeros((3, 107), bool)
    mask[:, [0, 5, 106]] = True
    a = RandomAgent(seed=3).act(None, mask)
    b = make_agent("random", seed=3).act(np.zeros((3, 1), np.float32), mask)  # it never reads observations
    assert a.dtype == np.int64 and (a == b).all() and set(a) <= {0, 5, 106}
    assert RandomAgent(seed=3).act(None, mask[0]) == a[0]  # one row: one action
    with pytest.raises(ValueError, match=r"action_masks must have shape \(B, 107\)"):
        RandomAgent(seed=0).act(None, mask[:, :50])


def test_an_unreadable_saved_file_is_one_line_naming_it():
    """A plug-in agent whose saved file is not what its script saves raises ``unreadable_file_error``: the
    file, what it should be, the reader's error type and only its first sentence (torch's runs to a page)."""
    error = unreadable_file_error("runs/x.pt", "a policy saved by examples/x.py",
                                  RuntimeError("Weights only load failed. In PyTorch 2.6, we changed...\nmore"))
    assert isinstance(error, ValueError)
    assert str(error) == ("'runs/x.pt' is not a policy saved by examples/x.py "
                          "(RuntimeError: Weights only load failed)")
    assert str(unreadable_file_error("m.zip", "a model", KeyError("features"))) == "'m.zip' is not a model (KeyError: 'features')"


def test_a_saved_file_is_the_path_then_the_variable_then_the_default(tmp_path, monkeypatch):
    given, named, default = (tmp_path / n for n in ("given.pt", "named.pt", "default.pt"))
    for f in (given, named, default):
        f.write_bytes(b"")
    monkeypatch.setenv("OKGIN_TEST_MODEL", str(named))
    assert saved_file(given, "OKGIN_TEST_MODEL", default, "x.py") == given
    assert saved_file(None, "OKGIN_TEST_MODEL", default, "x.py") == named
    monkeypatch.delenv("OKGIN_TEST_MODEL")
    assert saved_file(None, "OKGIN_TEST_MODEL", default, "x.py") == default
    with pytest.raises(FileNotFoundError, match=r"no trained model at '.*gone.pt': run x.py first, or set OKGIN_TEST_MODEL"):
        saved_file(tmp_path / "gone.pt", "OKGIN_TEST_MODEL", default, "x.py")
