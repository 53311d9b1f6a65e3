#!/usr/bin/env python3
"""Play Oklahoma Gin in the terminal against a bot, watch two bots, or replay a logged game.

    python play.py --opponent expert                  # a game to 100 against the expert bot
    python play.py --opponent simple --hand-only      # a single hand
    python play.py --opponent ppo:runs/quick/best.pt --rules knock_limit=10 target_score=50
    python play.py --watch ppo:runs/quick/best.pt expert --delay 0.5
    python play.py --opponent expert --seed 7 --log game.json
    python play.py --replay game.json                 # Enter steps one move (q quits)
    python play.py --replay game.json --delay 0 < /dev/null   # the whole game at once
    python play.py --web --opponent expert            # the same table in a browser (okgin.web, docs/play.md)

Commands while playing (case-insensitive):
    s            draw the top card of the stock
    t            take the top card of the discard pile (the upcard during the offer)
    p            pass on the first upcard
    7h, Th, 10h  discard that card
    k 7h         knock, discarding the 7h face down
    ?            help            q   quit

You are player 0 ("You"); the opponent is player 1. The game runs on
``okgin_env.VectorGame(1, rules, episode="game")`` (``"hand"`` with ``--hand-only``); the
opponent acts through ``agents.make(spec).act(observation, mask)``. The screen comes from
``okgin_env.render.text``. Exit codes: 0 normal end (also quitting and end of input), 2 bad
arguments / agent spec / rules / replay file, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Sequence

import numpy as np

from okgin.human_table import (
    HELP,
    HUMAN,
    Table,
    UsageError,
    bot_action,
    check_log,
    illegal_reason,
    move_words,
    opponent_seed,
    parse_command,
    parse_rules,
    result_key,
    seat_bot,
    spec_label,
)
from okgin_env.game.actions import DRAW_STOCK, KNOCK, NUM_ACTIONS, PASS, TAKE_DISCARD, action_text  # noqa: F401
from okgin_env.game.cards import NUM_CARDS, card_text, cards_of
from okgin_env.game.core import Phase
from okgin_env.game.rules import Rules  # noqa: F401  (tests and scripts use play.Rules)
from okgin_env.render.text import (
    card_str,
    cards_str,
    knock_limit_words,
    meld_groups,
    pile_top,
    render_hand_result,
    render_player_view,
)

DEFAULT_DELAY = 0.4  #: seconds between moves in --watch / --replay (non-interactive)
EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130

_ASCII_SUITS = str.maketrans({"♠": "s", "♥": "h", "♦": "d", "♣": "c"})


class StopGame(Exception):
    """The user quit or the input ended."""


# ----------------------------------------------------------------------------- helpers

def use_color(no_color: bool) -> bool:
    return (not no_color and sys.stdout.isatty() and os.environ.get("TERM", "") != "dumb"
            and "NO_COLOR" not in os.environ)


def _stdout_unicode() -> bool:
    try:
        "♠♥♦♣".encode(sys.stdout.encoding or "ascii")
        return True
    except (UnicodeEncodeError, LookupError):
        return False


class Screen:
    """Output with colour on or off; suits fall back to letters where stdout cannot encode them."""

    def __init__(self, color: bool) -> None:
        self.color = color
        self.unicode = _stdout_unicode()

    def fix(self, text: str) -> str:
        return text if self.unicode else text.translate(_ASCII_SUITS)

    def print(self, text: str = "") -> None:
        print(self.fix(text), flush=True)

    def read(self, prompt: str) -> str:
        """One line of input; EOF raises StopGame. Piped input is echoed so transcripts read well."""
        try:
            line = input(self.fix(prompt))
        except EOFError:
            print(flush=True)
            raise StopGame("end of input") from None
        if not sys.stdin.isatty():
            print(line, flush=True)
        return line

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.color else text


def allowed_moves(mask: np.ndarray, state, color: bool) -> str:
    """What is allowed now, as commands."""
    parts = []
    top = pile_top(state)
    if mask[DRAW_STOCK]:
        parts.append("s (draw from the stock)")
    if mask[TAKE_DISCARD]:
        parts.append(f"t (take the {card_str(top, color)})" if top >= 0 else "t (take the top discard)")
    if mask[PASS]:
        parts.append(f"p (pass on the {card_str(top, color)})")
    discards = [c for c in range(NUM_CARDS) if mask[c]]
    if discards:
        parts.append(f"discard one of {cards_str(discards, color)} (e.g. {card_text(discards[-1])})")
        knocks = [c for c in range(NUM_CARDS) if mask[KNOCK + c]]
        if knocks:
            parts.append("knock: " + ", ".join(f"k {card_text(c)}" for c in knocks))
    parts.append("? (help), q (quit)")
    return "Allowed now: " + "; ".join(parts)


def prompt_for(mask: np.ndarray, state, color: bool) -> str:
    top = pile_top(state)
    top_s = card_str(top, color) if top >= 0 else "top discard"
    if mask[PASS]:
        return f"Take the {top_s} (t) or pass (p)? [? help] > "
    if mask[DRAW_STOCK] and not mask[TAKE_DISCARD]:
        return "Both passed on the upcard: draw from the stock (s). [? help] > "
    if mask[DRAW_STOCK]:
        return f"Draw from the stock (s) or take the {top_s} (t)? [? help] > "
    knocks = [c for c in range(NUM_CARDS) if mask[KNOCK + c]]
    knock = f", or knock ({', '.join('k ' + card_text(c) for c in knocks[:4])}{', ...' if len(knocks) > 4 else ''})" \
        if knocks else ""
    legal = [c for c in range(NUM_CARDS) if mask[c]]
    example = card_text(legal[-1]) if legal else "9c"
    return f"Discard a card (e.g. {example}){knock}? [? help] > "


# ------------------------------------------------------------------------ screens

def hand_banner(t: Table, scr: Screen) -> str:
    s = t.state
    dealer = int(s.dealer[0])
    totals = ""
    if not t.hand_only:
        sc = s.scores[0]
        totals = f"   Scores: {t.names[0]} {int(sc[0])}, {t.names[1]} {int(sc[1])} (game to {t.rules.target_score})"
    kl = knock_limit_words(s, t.rules, 0, scr.color)
    deals = "deal" if t.names[dealer] == "You" else "deals"
    return scr.bold(f"===== Hand {t.hand_no}: {t.names[dealer]} {deals}, knock limit {kl} =====") \
        + ("\n" + totals if totals else "")


def result_screen(t: Table, info: dict, scr: Screen) -> str:
    text = render_hand_result(info, names=t.names, color=scr.color)
    extra = _game_bonus_line(t, info)
    bar = scr.bold(f"===== Hand {t.ended_hand_no} over =====")
    return f"{bar}\n{text}" + (f"\n  {extra}" if extra else "")


def _game_bonus_line(t: Table, info: dict) -> str:
    if t.hand_only or not (info["game_over"] and t.rules.game_bonuses):
        return ""
    won = [int(x) for x in t.state.hands_won[0]]
    w = info["game_winner"]
    parts = [f"{t.names[p]} +25 x {won[p]} hands won" for p in (0, 1)]
    parts[w] += " +100 for the game"
    tail = ", then doubled (shutout)" if won[1 - w] == 0 else ""
    return f"Game bonuses (included in the totals): {'; '.join(parts)}{tail}."


def watch_screen(t: Table, mover: int | None, scr: Screen) -> str:
    """Compact omniscient view (both hands) for --watch and --replay."""
    s = t.state
    c = scr.color
    n_pile = int(s.pile_size[0])
    top = card_str(pile_top(s), c) if n_pile else "(empty)"
    stock = NUM_CARDS - int(s.stock_next[0])
    lines = [f"Hand {t.hand_no}, turn {int(s.turns[0]) + 1}: knock limit {knock_limit_words(s, t.rules, 0, c)}, "
             f"stock {stock}, discard pile {top} ({n_pile})"]
    width = max(len(n) for n in t.names) + len(" (dealer)")
    for p in (0, 1):
        hand = cards_of(s.hands[0, p])
        melds, dead = meld_groups(hand)
        mtxt = " ".join(f"[{cards_str(m, c)}]" for m in melds)
        label = f"{t.names[p]}{' (dealer)' if int(s.dealer[0]) == p else ''}".ljust(width)
        score = "" if t.hand_only else f"   score {int(s.scores[0, p])}"
        lines.append(f"  {label} {mtxt}{' ' if mtxt else ''}deadwood {cards_str(dead, c) or '-'} = "
                     f"{sum(min(x % 13 + 1, 10) for x in dead)}{score}")
    if mover is not None and t.last[mover] is not None:
        lines.append(f"  -> {t.names[mover]} {move_words(t.last[mover], t.drawn[mover], c, reveal=True)}")
    return "\n".join(lines)


# ------------------------------------------------------------------------ the modes

def play_human(args, rules: Rules, seed: int, scr: Screen) -> int:
    spec = args.opponent
    opp = seat_bot(spec, opponent_seed(seed, 0), rules)
    names = ("You", spec_label(spec))
    t = Table(rules, args.hand_only, seed, names, ("human", spec))
    interactive = sys.stdin.isatty()
    what = "one hand" if args.hand_only else f"a game to {rules.target_score}"
    scr.print(f"Oklahoma Gin: you against {names[1]}, {what} (seed {seed}). Type ? for help, q to quit.")
    scr.print(hand_banner(t, scr))
    opp_moves: list[str] = []
    try:
        while not t.finished:
            p = t.current
            if p != HUMAN:
                a = bot_action(opp, spec.strip(), t)
                info = t.step(a)
                opp_moves.append(t.last_move[1].words(scr.color))
                if info is not None:
                    _end_of_hand(t, info, opp_moves, scr, interactive)
                    opp_moves = []
                continue
            scr.print()
            scr.print(render_player_view(t.state, HUMAN, rules, episode=t.episode, last_actions=t.last,
                                         names=names, color=scr.color))
            if opp_moves:
                scr.print(f"  {names[1]} just: {', '.join(opp_moves)}")
            mine = t.last[HUMAN]
            if mine is not None and mine.action == DRAW_STOCK and int(t.state.phase[0]) == Phase.DISCARD:
                scr.print(f"  You drew the {card_str(t.drawn[HUMAN], scr.color)} from the stock.")
            opp_moves = []
            a = _ask_human(t, scr)
            info = t.step(a)
            if info is not None:
                _end_of_hand(t, info, [], scr, interactive)
    except StopGame as e:
        sc = t.state.scores[0]
        totals = "" if t.hand_only else f" Scores: You {int(sc[0])}, {names[1]} {int(sc[1])}."
        scr.print(f"Game stopped ({e}) after {t.moves} moves.{totals}")
    finally:
        _write_log(args, t, "play", scr)
    return EXIT_OK


def _ask_human(t: Table, scr: Screen) -> int:
    while True:
        mask = t.mask
        line = scr.read(prompt_for(mask, t.state, scr.color))
        kind, value = parse_command(line)
        if kind == "quit":
            raise StopGame("you quit")
        if kind == "help":
            scr.print(HELP)
            scr.print(allowed_moves(mask, t.state, scr.color))
            continue
        if kind == "empty":
            scr.print(allowed_moves(mask, t.state, scr.color))
            continue
        if kind == "error":
            scr.print(value)
            scr.print(allowed_moves(mask, t.state, scr.color))
            continue
        if not mask[value]:
            scr.print(illegal_reason(value, t.state, t.rules, scr.color))
            scr.print(allowed_moves(mask, t.state, scr.color))
            continue
        return int(value)


def _end_of_hand(t: Table, info: dict, opp_moves: list[str], scr: Screen, interactive: bool) -> None:
    scr.print()
    if opp_moves:
        scr.print(f"{t.names[1 - HUMAN]} just: {', '.join(opp_moves)}")
    scr.print(result_screen(t, info, scr))
    if t.finished:
        return
    if interactive:
        line = scr.read("Press Enter to deal the next hand (q to quit) > ")
        if parse_command(line)[0] == "quit":
            raise StopGame("you quit")
    scr.print()
    scr.print(hand_banner(t, scr))


def watch(args, rules: Rules, seed: int, scr: Screen) -> int:
    spec_a, spec_b = args.watch
    bots = (seat_bot(spec_a, opponent_seed(seed, 0), rules), seat_bot(spec_b, opponent_seed(seed, 1), rules))
    na, nb = spec_label(spec_a), spec_label(spec_b)
    names = (na, nb) if na != nb else (f"{na} A", f"{nb} B")
    t = Table(rules, args.hand_only, seed, names, (spec_a, spec_b))
    delay = DEFAULT_DELAY if args.delay is None else args.delay
    what = "one hand" if args.hand_only else f"a game to {rules.target_score}"
    scr.print(f"Watching {names[0]} against {names[1]}, {what} (seed {seed}).")
    scr.print(hand_banner(t, scr))
    try:
        while not t.finished:
            p = t.current
            a = bot_action(bots[p], args.watch[p].strip(), t, "agent")
            _show_move(t, p, a, scr, delay)
    except StopGame:
        pass
    finally:
        _write_log(args, t, "watch", scr)
    return EXIT_OK


def _show_move(t: Table, p: int, a: int, scr: Screen, delay: float) -> None:
    info = t.step(a)
    if info is None:
        scr.print(watch_screen(t, p, scr))
    else:
        _, la, drawn = t.last_move
        scr.print(f"  -> {t.names[p]} {move_words(la, drawn, scr.color, reveal=True)}")
        scr.print(result_screen(t, info, scr))
        if not t.finished:
            scr.print(hand_banner(t, scr))
    if delay > 0:
        time.sleep(delay)


def _write_log(args, t: Table, mode: str, scr: Screen) -> None:
    path = getattr(args, "log", None)
    if not path:
        return
    try:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(t.log_dict(mode), f, indent=1)
            f.write("\n")
        scr.print(f"Game log written to {path}.")
    except OSError as e:
        print(f"play.py: error: cannot write log {path}: {e.strerror or e}", file=sys.stderr)


# ------------------------------------------------------------------------ replay

def load_log(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise UsageError(f"replay file {path!r} does not exist") from None
    except OSError as e:
        raise UsageError(f"cannot read replay file {path!r}: {e.strerror or e}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise UsageError(f"replay file {path!r} is not valid JSON ({e})") from None
    return check_log(data, f"replay file {path!r}")


def replay(args, scr: Screen) -> int:
    path = args.replay
    data = load_log(path)
    rules: Rules = data["_rules"]
    names = tuple(data["players"])
    t = Table(rules, data["episode"] == "hand", data["seed"], names, tuple(data.get("specs") or names))
    step_by_enter = sys.stdin.isatty() and args.delay is None
    delay = DEFAULT_DELAY if args.delay is None else args.delay
    n_moves = sum(len(h["actions"]) for h in data["hands"])
    scr.print(f"Replaying {path}: {names[0]} against {names[1]}, {len(data['hands'])} hand(s), {n_moves} moves "
              f"(seed {data['seed']}).")
    if step_by_enter:
        scr.print("Press Enter for the next move, q to stop.")
    diverged = lambda where, why: UsageError(  # noqa: E731
        f"replay of {path!r} diverged from the log at {where}: {why}")
    stopped = False
    try:
        for k, h in enumerate(data["hands"]):
            if t.finished:
                raise diverged(f"hand {k + 1}", "the game already ended")
            s = t.state
            deck = " ".join(card_text(int(c)) for c in s.deck[0])
            if deck != " ".join(h["deck"].split()) or int(s.dealer[0]) != h["dealer"]:
                raise diverged(f"hand {k + 1}", "the deal differs from the logged deck/dealer "
                               "(log written with a different dealing of the seed?)")
            if k == 0:
                scr.print(hand_banner(t, scr))
            ended = False
            for m, (p, a) in enumerate(h["actions"]):
                if p != t.current or not t.mask[a]:
                    raise diverged(f"hand {k + 1}, move {m + 1}",
                                   f"{names[p]} {action_text(a)} is not a legal move here")
                if step_by_enter:
                    line = scr.read("")
                    if parse_command(line)[0] == "quit":
                        raise StopGame("you quit")
                hand_before = t.hand_no
                _show_move(t, p, a, scr, 0.0 if step_by_enter else delay)
                ended = bool(t.out.hand_over[0])
                if ended:
                    got = t.log_hands[hand_before - 1]["result"]
                    want = h.get("result")
                    if want is not None and result_key(got) != result_key(want):
                        raise diverged(f"hand {k + 1}",
                                       f"result {result_key(got)} but the log says {result_key(want)}")
                    if m != len(h["actions"]) - 1:
                        raise diverged(f"hand {k + 1}, move {m + 1}", "the hand ended before the logged moves did")
            if not ended and (h.get("result") is not None or k < len(data["hands"]) - 1):
                raise diverged(f"hand {k + 1}", "the logged moves end but the hand did not")
    except StopGame:
        stopped = True
    if stopped:
        scr.print(f"Replay stopped after {t.moves} of {n_moves} moves.")
    elif not data.get("finished", False):
        scr.print(f"Replay finished: all {n_moves} logged moves replayed identically "
                  "(the logged game was stopped before its end).")
    else:
        final = next((x["result"] for x in reversed(t.log_hands) if x["result"]), None)
        same = t.finished and final is not None and final["scores"] == data.get("final_scores")
        if not same:
            raise diverged("the end", f"final scores {None if final is None else final['scores']} "
                           f"but the log says {data.get('final_scores')}")
        scr.print(f"Replay finished: same {n_moves} moves and same result as logged "
                  f"({names[0]} {final['scores'][0]}, {names[1]} {final['scores'][1]}).")
    return EXIT_OK


# ------------------------------------------------------------------------ main

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit code 2
        self.exit(EXIT_USAGE, f"play.py: error: {message} (see python play.py --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="play.py", description="Play Oklahoma Gin in the terminal against a bot, watch two bots, "
                "or replay a logged game.", epilog="Commands while playing: s draw, t take, p pass, 7h discard, "
                "k 7h knock, ? help, q quit.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--opponent", default="expert", metavar="SPEC",
                      help="agent to play against: random, greedy, simple, expert, search[:K[:PATH]] or ppo:PATH (default expert)")
    mode.add_argument("--watch", nargs=2, metavar=("A", "B"), help="watch agent A (player 0) play agent B")
    mode.add_argument("--replay", metavar="LOG.json", help="step through a game written with --log")
    p.add_argument("--rules", nargs="+", action="extend", default=[], metavar="KEY=VALUE",
                   help=f"rule options ({', '.join(Rules.option_names())})")
    p.add_argument("--seed", type=int, default=None, help="seed of the deals and the bots (default: random, printed)")
    p.add_argument("--hand-only", action="store_true", help="play a single hand instead of a game")
    p.add_argument("--delay", type=float, default=None,
                   help=f"seconds between moves in --watch/--replay (default {DEFAULT_DELAY}; with --replay on a "
                        "terminal the default is to wait for Enter)")
    p.add_argument("--log", metavar="FILE.json", help="write the deals and every action to this file")
    p.add_argument("--no-color", action="store_true", help="plain text, no ANSI colours")
    web = p.add_argument_group("in a browser (needs the 'web' extra; docs/play.md)")
    web.add_argument("--web", action="store_true", help="serve the table as a web page (with --opponent or --watch)")
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    web.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    web.add_argument("--allow-host", nargs="+", action="extend", default=[], metavar="NAME",
                     help="more host names the page may be reached by (default: the --host address and "
                          "localhost); others are refused, which stops DNS rebinding")
    web.add_argument("--allow", nargs="+", action="extend", default=[], metavar="SPEC",
                     help="more bots the page may choose from (fixed at start; clients only pick among them)")
    web.add_argument("--results", metavar="FILE.jsonl", default=os.path.join("runs", "human_results.jsonl"),
                     help="append each finished or abandoned human game here (default runs/human_results.jsonl; "
                          "read by evaluate.py --human-results)")
    web.add_argument("--db", metavar="URL",
                     help="also record each game in the results store (a SQLite file path or a URL such as "
                          "postgresql+psycopg://user@host/db; the arena extra) and serve its leaderboard at "
                          "/leaderboard (docs/arena.md)")
    return p


def serve_web(args, rules: Rules) -> int:
    """``--web``: serve the table in a browser (``okgin.web``) until Ctrl-C."""
    if args.replay or args.log:
        raise UsageError("--web opens logs on the page (its Replay tab) and offers each finished game's log; "
                         "drop --replay/--log")
    if not 1 <= args.port <= 65535:
        raise UsageError(f"--port must be 1-65535, got {args.port}")
    from okgin.web import WebConfig, serve
    config = WebConfig(opponent=args.opponent, allow=tuple(args.allow), rules=rules, hand_only=args.hand_only,
                       watch=tuple(args.watch) if args.watch else None, seed=args.seed, results=args.results,
                       listen=args.host, allow_hosts=tuple(args.allow_host), db=args.db)
    serve(config, port=args.port)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    scr = Screen(use_color(args.no_color))
    try:
        if args.delay is not None and not (args.delay >= 0):
            raise UsageError("--delay must be a number of seconds >= 0")
        if args.db and not args.web:
            raise UsageError("--db records the web table's games and serves its leaderboard; add --web")
        if args.replay and not args.web:
            if args.rules or args.seed is not None or args.hand_only or args.log:
                raise UsageError("--replay takes the rules, seed and mode from the log; drop "
                                 "--rules/--seed/--hand-only/--log")
            return replay(args, scr)
        if args.seed is not None and args.seed < 0:
            raise UsageError(f"--seed must be an integer >= 0, got {args.seed}")
        rules = parse_rules(args.rules)
        if args.web:
            return serve_web(args, rules)
        if args.allow:
            raise UsageError("--allow is for --web (the bots a web page may choose from)")
        if args.allow_host:
            raise UsageError("--allow-host is for --web (the host names its page may be reached by)")
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % (2 ** 31))
        if args.log:
            try:
                open(args.log, "a", encoding="utf-8").close()
            except OSError as e:
                raise UsageError(f"cannot write log {args.log!r}: {e.strerror or e}") from None
        if args.watch:
            return watch(args, rules, seed, scr)
        return play_human(args, rules, seed, scr)
    except UsageError as e:
        sys.stdout.flush()
        print(f"play.py: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\nInterrupted.", flush=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return EXIT_OK


def cli() -> None:
    """The ``okgin-play`` command (and ``python play.py``)."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
