"""Each env's card (the table at the top of its section, PettingZoo's header table) says what the env gives.

The card is the Markdown table under ``<!-- env-card: NAME -->``; this test builds the env and
compares the card's agents, action space, observation shape, render modes, parallel API and turn cap
with what the env itself reports, so a card cannot drift from the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: card name -> the page that holds it
CARDS = {"aec": "docs/environments.md", "single": "docs/environments.md", "vector": "docs/vector_env.md"}
FIELDS = ("Import", "Agents", "Action space", "Observation space", "Reward", "Episode length", "Parallel API",
          "Render modes")


def read_card(name: str, root: Path = ROOT) -> dict[str, str]:
    """The card's rows, field -> cell text."""
    lines = (root / CARDS[name]).read_text(encoding="utf-8").split("\n")
    start = lines.index(f"<!-- env-card: {name} -->") + 1
    rows = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and not set(cells[0]) <= set("-:"):
            rows[cells[0]] = cells[1]
    return rows


def _render_modes(cell: str) -> set[str]:
    return set(re.findall(r"`(\w+)`", cell)) if cell != "none" else set()


@pytest.mark.parametrize("name", list(CARDS))
def test_every_card_has_the_fields(name):
    assert list(read_card(name)) == list(FIELDS), f"{CARDS[name]}: card {name!r} needs exactly {FIELDS}"


def test_the_aec_card_matches_the_env():
    import okgin_env
    from okgin_env import OBS_SIZE, Rules

    card, env = read_card("aec"), okgin_env.env()
    env.reset(seed=0)
    assert re.findall(r"`(\w+)`", card["Agents"]) == list(env.possible_agents)
    for agent in env.possible_agents:
        assert f"`{env.action_space(agent)}`" == card["Action space"]
        space = env.observation_space(agent)
        assert f"Box({OBS_SIZE},) {space['observation'].dtype}" in card["Observation space"]
        assert f"Box({space['action_mask'].shape[0]},) {space['action_mask'].dtype}" in card["Observation space"]
    assert _render_modes(card["Render modes"]) == set(env.metadata["render_modes"])
    assert card["Parallel API"].startswith("No") != bool(env.metadata.get("is_parallelizable"))
    assert f"after {Rules().max_turns_per_hand} turns" in card["Episode length"]
    assert "`okgin_env.env()`" in card["Import"]


def test_the_single_agent_card_matches_the_env():
    import gymnasium

    from okgin_env import OBS_SIZE, Rules

    card = read_card("single")
    env = gymnasium.make("okgin/OklahomaGin-v0", opponent="random")
    assert f"`{env.action_space}`" == card["Action space"]
    assert card["Observation space"].startswith(f"`Box({OBS_SIZE},) {env.observation_space.dtype}`")
    assert _render_modes(card["Render modes"]) == set(env.unwrapped.metadata["render_modes"])
    assert f"after {Rules().max_turns_per_hand} turns" in card["Episode length"]
    env.close()


def test_the_vector_card_matches_the_env():
    import gymnasium

    from okgin_env import OBS_SIZE

    card = read_card("vector")
    envs = gymnasium.make_vec("okgin/OklahomaGin-v0", num_envs=3, vectorization_mode="vector_entry_point")
    assert str(envs.action_space) == "MultiDiscrete([107 107 107])" and "`MultiDiscrete([107] * N)`" in card["Action space"]
    assert f"`{envs.single_action_space}`" in card["Action space"]
    assert envs.observation_space.shape == (3, OBS_SIZE) and f"`Box(N, {OBS_SIZE}) float32`" in card["Observation space"]
    assert _render_modes(card["Render modes"]) == set(envs.metadata.get("render_modes", []))
    envs.close()


def test_a_card_that_disagrees_is_caught(tmp_path):
    page = (ROOT / "docs" / "environments.md").read_text(encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "environments.md").write_text(page.replace("| Action space | `Discrete(107)` |",
                                                                     "| Action space | `Discrete(106)` |", 1),
                                                        encoding="utf-8")
    assert read_card("aec", tmp_path)["Action space"] == "`Discrete(106)`"
    import okgin_env

    assert f"`{okgin_env.env().action_space('player_0')}`" != read_card("aec", tmp_path)["Action space"]
