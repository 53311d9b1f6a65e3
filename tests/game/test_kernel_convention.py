"""One kernel convention across the env: named records, one module of constants, public names.

The kernels (``okgin_env.game.kernels``, ``okgin_env.envs.vector_kernels``, ``okgin_env.features.determinize``) take
named records (``okgin_env.game.records``, ``okgin_env.game.rules.RuleParams``, the vector env's own) and
read every field by name: no group of index constants is left to keep in order. What one module
shares with another is public; the phases and the game's fixed numbers come from
``okgin_env.game.constants``; the vector env and the search reach the game through ``VectorGame``'s
public surface. These tests pin each of those.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest
from support import ROOT

from okgin_env.envs import vector_kernels
from okgin_env.envs.reward import RewardRule, reward_rule
from okgin_env.envs.vector import OkginVectorEnv
from okgin_env.game import constants, core
from okgin_env.game.core import HandResult, VectorGame, random_legal_actions
from okgin_env.game.observation import OBS_FIELDS, STOCK_SCALE
from okgin_env.game.records import Core, GameState
from okgin_env.game.rules import RuleParams, Rules
from okgin_env.testing import reference


def test_phase_names_are_defined_once():
    assert core.Phase is constants.Phase and reference.Phase is constants.Phase
    for ph in constants.Phase:
        assert getattr(constants, "PH_" + ph.name) == int(ph)


def test_the_observation_layout_uses_the_constants():
    assert OBS_FIELDS["phase"].stop - OBS_FIELDS["phase"].start == constants.NUM_DECISION_PHASES == 5
    assert OBS_FIELDS["knock_limit"].stop - OBS_FIELDS["knock_limit"].start == constants.NUM_KNOCK_LIMITS == 11
    assert STOCK_SCALE == constants.FULL_STOCK == 31


# module-level names that would make a group of index constants (RP_KNOCK_LIMIT, OUT_FLAGS, ...)
_INDEX_GROUP = re.compile(r"^(ST|RP|RB|RI|RC|RES|OUT|F|LOG|RW|SP|OP|E|EV)_[A-Z][A-Z_]*$")
KERNEL_MODULES = ("okgin_env/game/core.py", "okgin_env/game/kernels.py", "okgin_env/game/records.py", "okgin_env/envs/vector_kernels.py",
                  "okgin_env/features/determinize.py", "okgin_env/features/rows.py", "okgin_env/features/learner.py", "okgin_env/game/melds.py",
                  "okgin_env/game/constants.py", "okgin_env/game/rules.py", "agents/choices.py")


def _assigned_names(path: Path) -> list[str]:
    names = []
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) \
            else []
        for t in targets:
            names += [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
    return names


@pytest.mark.parametrize("path", KERNEL_MODULES)
def test_no_group_of_index_constants_is_left(path):
    # kernels read records by field name; a tuple read through index constants is what #35 removed
    assert [n for n in _assigned_names(ROOT / path) if _INDEX_GROUP.match(n)] == []


def test_the_check_finds_an_index_group():
    assert _INDEX_GROUP.match("RP_KNOCK_LIMIT") and _INDEX_GROUP.match("F_NEED_DEAL")
    assert not _INDEX_GROUP.match("PH_DRAW") and not _INDEX_GROUP.match("RUN_DEADWOOD")


def test_the_kernels_receive_the_games_own_arrays_in_field_order():
    g = VectorGame(3, Rules(spade_double=True), episode="game")
    core = Core(*g.kernel_core)
    assert RuleParams(*core.rules) == g.core.rules and g.core.rules.spade_double and g.core.rules.game_episode
    for plain_rec, rec in ((core.state, g.state), (core.result, g.core.result), (core.out, g.core.out)):
        assert type(plain_rec) is tuple and len(plain_rec) == len(rec)
        assert all(a is b for a, b in zip(plain_rec, rec))
    assert g.core.state is g.state and g.state.stock_next is g.state[GameState._fields.index("stock_next")]


def test_the_env_records_hold_each_named_array():
    # ended_idx, real_idx and opp_idx have one type: the record's names are what keeps them apart
    env = OkginVectorEnv(3, opponent="random")
    arrays = vector_kernels.EnvArrays(*env._env_arrays)
    for name in vector_kernels.EnvArrays._fields:
        got = getattr(arrays, name)
        if name == "mask":
            assert got is env.game.mask_buffer
        else:
            assert got is getattr(env._a, name)  # the env's GameArrays
    book = vector_kernels.Booking(*env._booking)
    assert RewardRule(*book.rule) == reward_rule(env.config)
    for name in ("step_log", "reset_log"):
        log = getattr(env, f"_{name}")
        count, net, result = getattr(book, name)
        assert count is log.count and net is log.net and all(a is b for a, b in zip(result, log.result))


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


def test_step_reuses_its_buffers_and_blanks_them_each_step():
    g = VectorGame(5, seed=1, autoreset=True)
    out = g.reset()
    rng = np.random.default_rng(1)
    first = None
    seen_hand = False
    for _ in range(400):
        prev_over = out.hand_over.copy()
        out = g.step(random_legal_actions(out.legal_action_mask, rng))
        first = first or out
        assert out.rewards is first.rewards and out.result is first.result and out.terminated is first.terminated
        # rows whose hand did not end in this step are blank, whatever ended in the step before
        quiet = ~out.hand_over
        assert not out.rewards[quiet].any() and (out.result.winner[quiet] == -1).all()
        assert not out.result.hands[quiet].any() and (out.result.meld_id[quiet] == -1).all()
        seen_hand |= bool((prev_over & quiet).any())
    assert seen_hand  # a row that ended a hand was blanked again
    reset = g.reset()
    assert reset.rewards is first.rewards and not reset.hand_over.any() and (reset.result.knocker == -1).all()
    assert g.mask_buffer.shape == (5, 107) and g.rule_params == g.core.rules


def test_a_blank_result_is_blank():
    blank = HandResult.blank(4)
    for name, a in zip(HandResult._fields, blank):
        assert len(a) == 4
        assert (a == (False if a.dtype == bool else -1)).all(), name


NAMEDTUPLE_API = ("_fields", "_replace", "_asdict", "_make")  # public, despite the underscore


def _private_uses(path: Path) -> list[str]:
    """Private names read off another object (``game._mask``) or imported (``from x import _k``)."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                and node.attr not in NAMEDTUPLE_API:
            owner = node.value
            if not (isinstance(owner, ast.Name) and owner.id in ("self", "cls")):
                found.append(f"line {node.lineno}: .{node.attr}")
        if isinstance(node, ast.ImportFrom):
            found += [f"line {node.lineno}: import {a.name}" for a in node.names if a.name.startswith("_")]
    return found


@pytest.mark.parametrize("path", ["okgin_env/envs/vector.py", "agents/search.py", *KERNEL_MODULES])
def test_no_private_names_of_other_modules(path):
    assert _private_uses(ROOT / path) == []


def _leaves(record):
    return [a for x in record for a in (_leaves(x) if isinstance(x, tuple) else [x])]


def test_the_structrefs_point_at_the_games_and_envs_own_arrays():
    # the kernels behind core_ref's structrefs write in place: a copy there would lose every write
    env = OkginVectorEnv(3, opponent="random")
    game = env.game
    pairs = list(zip(env._ref.fields(), (game._core, env._env_arrays, env._booking)))
    pairs += list(zip(game._ref.fields(), (game._core, game._mask)))
    for got, want in pairs:
        got, want = (_leaves(got), _leaves(want)) if isinstance(want, tuple) else ([got], [want])
        assert len(got) == len(want)
        for a, b in zip(got, want):
            if isinstance(b, np.ndarray):
                assert a.shape == b.shape and a.dtype == b.dtype and np.shares_memory(a, b)
            else:
                assert a == b


@pytest.mark.parametrize("clone", ["deepcopy", "pickle"])
def test_a_cloned_env_steps_as_the_original_on_its_own_arrays(clone):
    import copy
    import pickle
    env = OkginVectorEnv(3, opponent="random")
    env.reset(seed=5)
    twin = copy.deepcopy(env) if clone == "deepcopy" else pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = random_legal_actions(env.action_masks(), rng)
        o1, r1, *_ = env.step(a)
        o2, r2, *_ = twin.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
    assert not np.shares_memory(env._obs, twin._obs) and not np.shares_memory(env.game.state.deck, twin.game.state.deck)
    for got, want in zip(twin._ref.fields()[1], twin._env_arrays):
        assert np.shares_memory(got, want)


# The Python side of the kernel boundary: what it hands a kernel is a record (or a record's plain
# tuple, ``records.plain(...)``), never a tuple written out by position, and it reads no record by index.
BOUNDARY_MODULES = ("okgin_env/game/core.py", "okgin_env/game/handle.py", "okgin_env/envs/vector.py",
                    "okgin_env/envs/vector_handle.py")


def _positional_crossings(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name.endswith(("_with_ref", "_kernel")) and any(isinstance(a, ast.Tuple) for a in node.args):
                found.append(f"line {node.lineno}: a tuple literal handed to {name}")
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            base = ast.unparse(node.value)
            if base.startswith(("ref.", "book", "self._booking", "self._env_arrays", "core", "self._core")):
                found.append(f"line {node.lineno}: {base}[{node.slice.value}]")
    return found


@pytest.mark.parametrize("path", BOUNDARY_MODULES)
def test_records_cross_the_kernel_boundary_by_name(path):
    assert _positional_crossings((ROOT / path).read_text()) == []


def test_the_boundary_check_finds_positions():
    assert _positional_crossings("step_with_ref(r, (a, b))\nx = ref.book[1]\n") == [
        "line 1: a tuple literal handed to step_with_ref", "line 2: ref.book[1]"]
