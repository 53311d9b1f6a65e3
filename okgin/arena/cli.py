"""``okgin-arena`` (and ``python -m okgin.arena``): the results store, the ladder and the ratings.

    okgin-arena register  --db DB NAME SPEC                 # put an agent on the ladder
    okgin-arena agents    --db DB                           # who is registered
    okgin-arena schedule  --db DB (--rounds N | --uncertain N) [--hands 10] [--seed 0] [--rules k=v ...]
    okgin-arena run       --db DB [--workers 1] [--move-seconds 5] [--memory-mb 2048] [--max-matches N]
                          [--ray [ADDRESS]]                 # matches as Ray tasks (the integrations extra)
    okgin-arena ratings   --db DB [--rules k=v ...] [--bootstrap 1000] [--seed 0] [--json PATH]
    okgin-arena upgrade   --db DB                           # create the tables or migrate an older store

DB is a SQLite file path or a URL (``postgresql+psycopg://user@host/db``); ``OKGIN_ARENA_DB`` is the
default. docs/arena.md explains each command.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Sequence

PROG = "okgin-arena"


def _rules(ap: argparse.ArgumentParser, items: Sequence[str]) -> dict:
    from okgin_env import Rules

    try:
        return Rules.from_strings(list(items)).to_dict()
    except ValueError as e:
        ap.error(f"--rules: {e}")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description="The okgin arena: results store, ladder and ratings "
                                                        "(docs/arena.md).")
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--db", default=os.environ.get("OKGIN_ARENA_DB"), metavar="DB",
                       help="a SQLite file path or a database URL (default: $OKGIN_ARENA_DB)")
        return p

    p = command("register", "put an agent on the ladder under a name")
    p.add_argument("name", help="its name in the ratings (unique)")
    p.add_argument("spec", help="its agent spec: random, greedy, simple, expert, search[:K[:PATH]], ppo:PATH, "
                                "llm:MODEL@BASE_URL, or a plug-in module:Attr (played in a sandbox)")
    command("agents", "list the ladder's agents")
    p = command("schedule", "add matches to the ladder's schedule")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--rounds", type=int, metavar="N", help="every pair of registered agents N times (round robin)")
    how.add_argument("--uncertain", type=int, metavar="N",
                     help="N matches for the pairs whose rating difference is least certain (widest bootstrap "
                          "interval; pairs that never met first)")
    p.add_argument("--hands", type=int, default=10, help="hands per match, even: duplicate deals (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the matches' deals (default 0)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE", help="rule options, e.g. knock_limit=10")
    p = command("run", "play the scheduled matches (until none is pending)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes playing at once (default 1); with --ray, Ray tasks at once (default: the "
                        "cluster's CPUs)")
    p.add_argument("--move-seconds", type=float, default=5.0,
                   help="a plug-in bot's time per move; slower loses the hand (default 5)")
    p.add_argument("--memory-mb", type=int, default=2048, help="a plug-in bot's address-space limit (default 2048)")
    p.add_argument("--max-matches", type=int, default=None, metavar="N",
                   help="stop each worker after N matches (with --ray: after N matches in all)")
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="play the matches as Ray tasks; the driver (this process) writes the store: ADDRESS "
                        "'auto' (the cluster of `ray start`), 'ray://HOST:10001', or none for a Ray on this "
                        "machine (pip install -e \".[integrations]\")")
    p = command("ratings", "Bradley-Terry ratings of everyone in the store, with bootstrap CIs (random = 0)")
    p.add_argument("--rules", nargs="*", default=[], metavar="KEY=VALUE",
                   help="the rule set whose results are rated (default: Oklahoma Gin's defaults)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="resamples behind the CIs (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument("--json", metavar="PATH", help="also write the table to this JSON file")
    command("upgrade", "create the store's tables or migrate an older store to this okgin's schema")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not args.db:
        ap.error("--db is required (a SQLite file path or a URL), or set OKGIN_ARENA_DB")
    for name in ("rounds", "uncertain", "workers", "max_matches", "hands", "bootstrap", "seed", "memory_mb"):
        value = getattr(args, name, None)
        low = {"bootstrap": 0, "seed": 0, "memory_mb": 256, "hands": 2}.get(name, 1)
        if value is not None and value < low:
            ap.error(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
    if getattr(args, "hands", 2) % 2:
        ap.error(f"--hands must be even (every deal is played from both seats), got {args.hands}")
    try:
        from okgin.arena import ladder
        from okgin.arena.store import Store
    except ImportError as e:
        ap.error(str(e))
    try:
        store = Store(args.db)
    except ValueError as e:
        ap.error(f"--db: {e}")
    except Exception as e:  # noqa: BLE001 - a server that is down, a file that cannot be made: one line
        ap.error(f"--db {args.db}: {type(e).__name__}: {str(e).splitlines()[0][:300]}")
    try:
        return _run(ap, args, store, ladder)
    except ValueError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()


def _run(ap, args, store, ladder) -> int:
    if args.command == "upgrade":
        print(f"{store!r} is at schema revision {store.revision()}")
    elif args.command == "register":
        agent_id = ladder.register(store, args.name, args.spec)
        print(f"registered {args.name!r} ({args.spec}) as agent {agent_id}")
    elif args.command == "agents":
        for a in ladder.ladder_agents(store):
            print(f"{a['id']:>4}  {a['name']:<30} {a['kind']:<7} {a['spec']}")
    elif args.command == "schedule":
        rules = _rules(ap, args.rules)
        if args.rounds:
            n = ladder.round_robin(store, args.rounds, rules, args.seed, args.hands)
        else:
            n = ladder.uncertain(store, args.uncertain, rules, args.seed, args.hands)
        c = ladder.schedule_counts(store)
        print(f"scheduled {n} match(es) of {args.hands} hands; {c['pending']} pending in all")
    elif args.command == "run":
        limits = ladder.Limits(move_seconds=args.move_seconds, memory_mb=args.memory_mb)
        if args.ray is not None:
            try:
                from okgin.arena import ray_ladder

                c = ray_ladder.run(store.url, args.ray or None, args.workers, limits, args.max_matches)
            except (ImportError, RuntimeError) as e:
                print(f"{PROG}: error: {e}", file=sys.stderr)
                return 2
        else:
            c = ladder.run(store.url, args.workers or 1, limits, args.max_matches)
        print(f"ladder stopped: {c['done']} done, {c['pending']} pending, {c['running']} running elsewhere")
    elif args.command == "ratings":
        from okgin.arena.ratings import ratings
        from okgin.report_tables import format_ratings

        report = ratings(store, _rules(ap, args.rules), args.bootstrap, args.seed)
        if not report["ratings"]:
            print("no results to rate under these rules yet (okgin-arena run, evaluate.py --db, play.py --web --db)")
            return 0
        print(f"ratings (Bradley-Terry on {report['hands']} hands, {report['pairs']} pairs, Elo scale, "
              f"{report['anchor']} = 0)")
        if report["ci_method"]:
            print(f"95% CIs: {report['ci_method']}")
        print(format_ratings(report["ratings"]))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report, f, indent=2)
    return 0


def cli() -> None:
    """The ``okgin-arena`` console script."""
    sys.exit(main())


if __name__ == "__main__":
    cli()
