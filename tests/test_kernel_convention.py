"""One kernel convention across the env: named tuples of arrays, one module of constants, public names.

``okgin_env.core``'s kernels take the state as one tuple read through import-checked indices
(``st[ST_HANDS]``). The vector env's fused kernels (``okgin_env.vector_kernels``) and the
determinization kernel take the same tuples, plus the env's own arrays as tuples read the same
way (``env[EV_SEAT]``); the phases and the game's fixed numbers come from ``okgin_env.constants``;
the vector env and the search reach the game through ``VectorGame``'s public surface. These tests
pin each of those, so that a swapped tuple entry or a second definition fails here, not as
subtly wrong games.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from okgin_env import constants, core, reference, vector_kernels
from okgin_env.core import OUT_ENDED, OUT_FLAGS, OUT_NEXT_DEALER, OUT_REWARDS, HandResult, VectorGame, check_indices
from okgin_env.observation import OBS_FIELDS, STOCK_SCALE
from okgin_env.vector import OkginVectorEnv

ROOT = Path(__file__).resolve().parents[1]


def test_phase_names_are_defined_once():
    assert core.Phase is constants.Phase and reference.Phase is constants.Phase
    for ph in constants.Phase:
        assert getattr(constants, "PH_" + ph.name) == int(ph)


def test_the_observation_layout_uses_the_constants():
    assert OBS_FIELDS["phase"].stop - OBS_FIELDS["phase"].start == constants.NUM_DECISION_PHASES == 5
    assert OBS_FIELDS["knock_limit"].stop - OBS_FIELDS["knock_limit"].start == constants.NUM_KNOCK_LIMITS == 11
    assert STOCK_SCALE == constants.FULL_STOCK == 31


@pytest.mark.parametrize("prefix, fields", [
    ("LOG_", vector_kernels._LOG_FIELDS), ("EV_", vector_kernels._ENV_FIELDS), ("RW_", vector_kernels._REWARD_FIELDS),
    ("SP_", vector_kernels._STEP_FIELDS), ("OP_", vector_kernels._OPP_FIELDS)])
def test_a_misordered_vector_kernel_index_fails_the_import_check(prefix, fields):
    namespace = vars(vector_kernels)
    check_indices(namespace, prefix, fields)  # as the module checks itself at import
    swapped = (fields[1], fields[0]) + tuple(fields[2:])
    with pytest.raises(RuntimeError, match=f"{prefix}{fields[1].upper()} must be 0"):
        check_indices(namespace, prefix, swapped)
    with pytest.raises(RuntimeError, match=f"{prefix}{fields[-1].upper()} name no field"):
        check_indices(namespace, prefix, tuple(fields[:-1]))


def test_the_env_tuple_holds_each_named_array():
    # ended_idx, real_idx and opp_idx have one type: only the names keep a swap from compiling
    env = OkginVectorEnv(3, opponent="random")
    arrays = env._env_arrays
    assert len(arrays) == len(vector_kernels._ENV_FIELDS)
    for name in vector_kernels._ENV_FIELDS:
        got = arrays[getattr(vector_kernels, "EV_" + name.upper())]
        if name == "mask":
            assert got is env.game.mask_buffer
        elif name.endswith("_log"):
            want = getattr(env, f"_{name}").arrays()
            assert all(a is b for a, b in zip(got, want))
        else:
            assert got is getattr(env, f"_{name}")
    cfg = env._reward_cfg
    assert (cfg[vector_kernels.RW_POINTS], cfg[vector_kernels.RW_SCALE], cfg[vector_kernels.RW_GAME_EPISODE]) == \
        (env._points, env._scale, env._game_episode)


def test_deal_new_episodes_draws_as_reset_does():
    a, b = VectorGame(6, seed=3), VectorGame(6, seed=3)
    a.reset(seed=4)
    b.reset(seed=4)
    games = np.array([1, 4])
    a.reset(games=games)
    b.deal_new_episodes(games)
    sa, sb = a.get_state(), b.get_state()
    for name in ("deck", "hands", "dealer", "current_player", "phase", "knock_limit"):
        np.testing.assert_array_equal(getattr(sa, name), getattr(sb, name), err_msg=name)


def test_deal_next_hands_deals_where_asked_by_the_given_dealer():
    g = VectorGame(4, episode="game", seed=0)
    g.reset()
    before = g.get_state()
    need = np.array([False, True, False, True])
    g.deal_next_hands(need, np.array([0, 1, 0, 0], np.int8))
    after = g.get_state()
    np.testing.assert_array_equal(after.dealer[need], [1, 0])
    np.testing.assert_array_equal(after.deck[~need], before.deck[~need])


def test_step_buffers_are_blank_and_keep_the_games_ended_flags():
    g = VectorGame(5)
    out, res = g.step_buffers()
    assert out[OUT_REWARDS].shape == (5, 2) and not out[OUT_REWARDS].any()
    assert out[OUT_FLAGS].shape == (4, 5) and not out[OUT_FLAGS].any()
    assert out[OUT_NEXT_DEALER].shape == (5,)
    assert out[OUT_ENDED] is g.step_buffers()[0][OUT_ENDED]  # the game's own, kept across steps
    blank = HandResult(5)
    for name in ("ints", "bools", "cards", "meld_id"):
        np.testing.assert_array_equal(getattr(res, name), getattr(blank, name), err_msg=name)
    assert g.rule_params.dtype == np.int64 and g.mask_buffer.shape == (5, 107)


def _private_uses(path: Path) -> list[str]:
    """Private names read off another object (``game._mask``) or imported (``from x import _k``)."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith("_")]
    return found


@pytest.mark.parametrize("path", ["okgin_env/vector.py", "agents/search.py"])
def test_no_private_names_of_other_modules(path):
    assert _private_uses(ROOT / path) == []
