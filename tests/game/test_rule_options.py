"""Rule options: each declared once (``okgin_env.game.rules``), and everything derived from that one place.

The checks here are generated from the declarations, so a new option is tested by adding it: its
default, its edge values, values it must refuse, the rule book's table and the kernels' record.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest

from okgin_env.game import rules
from okgin_env.game.rules import (
    EAAI_TURN_CAP,
    Choice,
    Either,
    Flag,
    Integer,
    Nothing,
    RuleParams,
    Rules,
    rule_params,
)

RULE_BOOK = Path(__file__).resolve().parents[2] / "docs" / "RULES.md"
FIELDS = {f.name: f for f in fields(Rules)}


def edge_values(values) -> list:
    """Values an option must accept: both ends of a range, every word, both flags."""
    if isinstance(values, Integer):
        return [values.low, values.high]
    if isinstance(values, Flag):
        return [False, True]
    if isinstance(values, Choice):
        return list(values.choices)
    if isinstance(values, Nothing):
        return [None]
    return edge_values(values.first) + edge_values(values.second)


def bad_values(values) -> list:
    """Values an option must refuse: just outside a range, floats, text, bools for ints, None."""
    if isinstance(values, Integer):
        return [values.low - 1, values.high + 1, float(values.low), str(values.low), True, None]
    if isinstance(values, Flag):
        return [0, 1, "true", None]
    if isinstance(values, Choice):
        return ["no such word", values.choices[0].upper(), 0, None]
    if isinstance(values, Nothing):
        return ["None", "none", False]
    return [v for v in bad_values(values.first) + bad_values(values.second)
            if not values.first.check(v) and not values.second.check(v)]


def test_the_defaults_are_oklahoma_gin():
    """The upcard sets the knock limit; the rest is classic Gin (gin 25, undercut 10, winner deals)."""
    r = Rules()
    assert (r.knock_limit, r.gin_bonus, r.undercut_bonus, r.next_dealer) == ("upcard", 25, 10, "winner")
    assert r.to_dict() == {name: f.default for name, f in FIELDS.items()}
    assert Rules.from_dict(r.to_dict()) == r


@pytest.mark.parametrize("name", list(FIELDS))
def test_each_option_is_declared_with_values_a_default_of_them_and_a_meaning(name):
    values, doc = FIELDS[name].metadata["values"], FIELDS[name].metadata["doc"]
    assert isinstance(values, (Integer, Flag, Choice, Either, Nothing))
    assert values.check(FIELDS[name].default)
    assert doc and "\n" not in doc


@pytest.mark.parametrize("name,value", [(n, v) for n, f in FIELDS.items() for v in edge_values(f.metadata["values"])])
def test_each_option_takes_its_edge_values(name, value):
    r = Rules(**{name: value})
    assert getattr(r, name) == value
    assert Rules.from_strings([f"{name}={value}"]) == r  # the command line's key=value reads the same


@pytest.mark.parametrize("name,value", [(n, v) for n, f in FIELDS.items() for v in bad_values(f.metadata["values"])])
def test_each_option_refuses_other_values_saying_what_is_allowed(name, value):
    with pytest.raises(ValueError) as e:
        Rules(**{name: value})
    message = str(e.value)
    assert name in message and repr(value) in message and FIELDS[name].metadata["values"].allowed in message


def test_unknown_options_and_malformed_strings_are_refused():
    with pytest.raises(ValueError, match="knok_limit.*did you mean knock_limit"):
        Rules.from_dict({"knok_limit": 3})
    with pytest.raises(ValueError, match="knock_limit"):
        Rules.from_strings(["knock_limit=11"])
    with pytest.raises(ValueError, match="key=value"):
        Rules.from_strings(["knock_limit"])


def test_the_kernels_read_every_option_in_declaration_order():
    assert list(RuleParams._fields) == list(FIELDS) + ["game_episode"]
    params = rule_params(Rules(knock_limit=7, next_dealer="alternate", spade_double=True), "game")
    assert (params.knock_limit, params.next_dealer, params.spade_double, params.game_episode) == (7, 2, True, True)
    assert rule_params(Rules(), "hand").knock_limit == -1  # "upcard": the kernels read the upcard's value


def test_the_rule_books_option_table_is_generated_from_the_declarations():
    text = RULE_BOOK.read_text()
    assert rules.option_table() in text, (
        "docs/RULES.md's option table differs from the declarations: paste the output of "
        "python -c 'from okgin_env.game import rules; print(rules.option_table())'")


def test_the_eaai_rule_set_by_name_everywhere_a_rule_set_is_read():
    """``Rules.eaai()``: the EAAI framework's numbers, its showdown and a turn cap only endless hands reach; the
    name works in
    ``Rules.named``, ``from_dict`` (configs) and first on a command line, where options may follow."""
    eaai = Rules.eaai()
    assert (eaai.knock_limit, eaai.gin_bonus, eaai.undercut_bonus, eaai.next_dealer, eaai.target_score) == \
        (10, 25, 25, "alternate", 100)
    assert (eaai.discard_taken_card, eaai.game_bonuses, eaai.spade_double) == (False, False, False)
    assert (eaai.showdown, eaai.max_turns_per_hand) == ("eaai", EAAI_TURN_CAP) and EAAI_TURN_CAP >= 1000
    assert Rules.named("EAAI") == Rules.from_dict("eaai") == Rules.from_strings(["eaai"]) == eaai
    assert Rules.named("oklahoma") == Rules()
    assert Rules.from_strings(["eaai", "target_score=50"]).target_score == 50
    assert Rules.from_strings(["max_turns_per_hand=none"]).max_turns_per_hand is None
    assert rule_params(Rules(max_turns_per_hand=None), "game").max_turns_per_hand > 10**9  # no cap: never reached
    with pytest.raises(ValueError, match="unknown rule set 'eaia'; rule sets: oklahoma, eaai"):
        Rules.named("eaia")
    with pytest.raises(ValueError, match="or, first, a rule set: oklahoma, eaai"):
        Rules.from_strings(["knock_limit=3", "eaai"])
