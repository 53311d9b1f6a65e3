"""The results store's tables (SQLAlchemy Core): agents, matches, their hands and games, the ladder's schedule.

One row a match, written with its hands and games in one transaction (``okgin.arena.store``), so a
reader never counts half a match. Conventions of every table:

* agent A is ``matches.agent_a_id``; every per-hand and per-game figure is A's (B's is its complement);
* ``seat_a`` is the player id (0/1) agent A held in that hand or game;
* a hand's ``win`` is A's score in the ratings: 1 won, 0 lost, 0.5 void (wall or turn cap), and a
  forfeited hand (a bot that hung, crashed or answered illegally) is a loss of the offender;
* ``deal_set`` names the deal plan a match drew from: two matches with the same ``deal_set`` played
  the same deals (an evaluate.py run's pairs), so the ratings' bootstrap resamples those deals
  together, as evaluate.py does.

The schema is changed only by a migration (``okgin/arena/migrations/versions``); ``SCHEMA_REVISION``
names the newest, and tests/arena checks that it is Alembic's head.
"""

from __future__ import annotations

from sqlalchemy import (JSON, BigInteger, Boolean, Column, DateTime, Float, ForeignKey, Index, Integer, MetaData,
                        SmallInteger, String, Table, Text)

from okgin.arena.revision import SCHEMA_REVISION  # noqa: F401  (the newest migration, defined once)

metadata = MetaData(naming_convention={
    "ix": "ix_%(column_0_label)s", "uq": "uq_%(table_name)s_%(column_0_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s", "pk": "pk_%(table_name)s"})

agents = Table(
    "agents", metadata,
    Column("id", Integer, primary_key=True),
    Column("name", String(200), nullable=False, unique=True),  #: how tables and the ladder name it
    Column("spec", Text, nullable=False),  #: the agent spec (okgin_agents.make), or person:NAME
    Column("kind", String(16), nullable=False),  #: bot | plugin | model | person
    Column("weights_sha256", String(64)),  #: sha256 of the weights file the spec reads, if any
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("ladder", Boolean, nullable=False, default=False),  #: registered for the ladder (okgin-arena register)
)

matches = Table(
    "matches", metadata,
    Column("id", Integer, primary_key=True),
    Column("uid", String(64), nullable=False, unique=True),  #: the writer's id: a match is stored once
    Column("source", String(16), nullable=False),  #: evaluate | ladder | web | api
    Column("agent_a_id", ForeignKey("agents.id"), nullable=False),
    Column("agent_b_id", ForeignKey("agents.id"), nullable=False),
    Column("rules", JSON, nullable=False),  #: the Rules fields (Rules.to_dict())
    Column("rules_key", String(400), nullable=False),  #: the same as sorted compact JSON, for grouping
    Column("seed", BigInteger, nullable=False),  #: the deals' seed
    Column("agent_seeds", JSON),  #: [A's, B's] where the writer seeded them
    Column("deal_set", String(200), nullable=False),  #: matches with one deal_set played the same deals
    Column("duplicate", Boolean, nullable=False),  #: every deal twice, seats swapped
    Column("episode", String(8), nullable=False),  #: hand | game: what a row of `games` is
    Column("hands", Integer, nullable=False),  #: hand rows
    Column("wins_a", Integer, nullable=False),
    Column("wins_b", Integer, nullable=False),
    Column("voids", Integer, nullable=False),
    Column("forfeits_a", Integer, nullable=False, default=0),  #: hands A lost by hanging, crashing or an illegal move
    Column("forfeits_b", Integer, nullable=False, default=0),
    Column("points_a", BigInteger, nullable=False),  #: A's points minus B's over all hands
    Column("games", Integer, nullable=False),  #: game rows
    Column("game_wins_a", Integer, nullable=False),
    Column("game_wins_b", Integer, nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("finished_at", DateTime(timezone=True), nullable=False),
    Column("seconds", Float, nullable=False),
    Column("counted", Boolean, nullable=False),  #: in the ratings (a game a person abandoned is kept, not counted)
    Column("meta", JSON),  #: anything else the writer knows: illegal-move counts, tokens, errors
    Index("ix_matches_pair", "agent_a_id", "agent_b_id"),
)

hands = Table(
    "hands", metadata,
    Column("match_id", ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True),
    Column("idx", Integer, primary_key=True),  #: row of the match's plan
    Column("game", Integer, nullable=False),  #: the game (row of `games`) the hand belongs to
    Column("deal", Integer, nullable=False),  #: deal within the match's deal_set (the bootstrap's unit)
    Column("seat_a", SmallInteger, nullable=False),
    Column("win", Float, nullable=False),  #: A's score: 1, 0, 0.5 void
    Column("points", Integer, nullable=False),  #: A's points minus B's
    Column("void", Boolean, nullable=False),
    Column("knocker", SmallInteger, nullable=False),  #: 0 A, 1 B, -1 nobody
    Column("gin", Boolean, nullable=False),
    Column("undercut", Boolean, nullable=False),
    Column("forfeit", SmallInteger, nullable=False),  #: -1 none, 0 A forfeited the hand, 1 B did
)

games = Table(
    "games", metadata,
    Column("match_id", ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True),
    Column("idx", Integer, primary_key=True),
    Column("deal", Integer, nullable=False),
    Column("seat_a", SmallInteger, nullable=False),
    Column("seed", BigInteger),  #: the game's own seed where it was played from one (the web table, the ladder)
    Column("winner", SmallInteger),  #: 0 A, 1 B, null unfinished
    Column("score_a", Integer, nullable=False),
    Column("score_b", Integer, nullable=False),
    Column("hands", Integer, nullable=False),
    Column("log", JSON),  #: the okgin-play-log of the game (the web page replays it), where kept
)

schedule = Table(
    "schedule", metadata,
    Column("id", Integer, primary_key=True),
    Column("uid", String(64), nullable=False, unique=True),  #: the match's uid once played
    Column("agent_a_id", ForeignKey("agents.id"), nullable=False),
    Column("agent_b_id", ForeignKey("agents.id"), nullable=False),
    Column("rules", JSON, nullable=False),
    Column("seed", BigInteger, nullable=False),
    Column("hands", Integer, nullable=False),
    Column("status", String(8), nullable=False),  #: pending | running | done
    Column("worker", String(100)),  #: who claimed it (host:pid), for the log
    Column("claimed_at", DateTime(timezone=True)),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Index("ix_schedule_status", "status", "id"),
)

__all__ = ["SCHEMA_REVISION", "metadata", "agents", "matches", "hands", "games", "schedule"]
