"""The first schema: agents, matches, hands, games, schedule.

Revision ID: 0001
Revises:
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    tz = sa.DateTime(timezone=True)
    op.create_table(
        "agents",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("spec", sa.Text, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("weights_sha256", sa.String(64)),
        sa.Column("created_at", tz, nullable=False),
        sa.Column("ladder", sa.Boolean, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_agents"),
        sa.UniqueConstraint("name", name="uq_agents_name"),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uid", sa.String(64), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("agent_a_id", sa.Integer, sa.ForeignKey("agents.id", name="fk_matches_agent_a_id_agents"),
                  nullable=False),
        sa.Column("agent_b_id", sa.Integer, sa.ForeignKey("agents.id", name="fk_matches_agent_b_id_agents"),
                  nullable=False),
        sa.Column("rules", sa.JSON, nullable=False),
        sa.Column("rules_key", sa.String(400), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("agent_seeds", sa.JSON),
        sa.Column("deal_set", sa.String(200), nullable=False),
        sa.Column("duplicate", sa.Boolean, nullable=False),
        sa.Column("episode", sa.String(8), nullable=False),
        sa.Column("hands", sa.Integer, nullable=False),
        sa.Column("wins_a", sa.Integer, nullable=False),
        sa.Column("wins_b", sa.Integer, nullable=False),
        sa.Column("voids", sa.Integer, nullable=False),
        sa.Column("forfeits_a", sa.Integer, nullable=False),
        sa.Column("forfeits_b", sa.Integer, nullable=False),
        sa.Column("points_a", sa.BigInteger, nullable=False),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("game_wins_a", sa.Integer, nullable=False),
        sa.Column("game_wins_b", sa.Integer, nullable=False),
        sa.Column("started_at", tz, nullable=False),
        sa.Column("finished_at", tz, nullable=False),
        sa.Column("seconds", sa.Float, nullable=False),
        sa.Column("counted", sa.Boolean, nullable=False),
        sa.Column("meta", sa.JSON),
        sa.PrimaryKeyConstraint("id", name="pk_matches"),
        sa.UniqueConstraint("uid", name="uq_matches_uid"),
    )
    op.create_index("ix_matches_pair", "matches", ["agent_a_id", "agent_b_id"])
    op.create_table(
        "hands",
        sa.Column("match_id", sa.Integer,
                  sa.ForeignKey("matches.id", name="fk_hands_match_id_matches", ondelete="CASCADE"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("game", sa.Integer, nullable=False),
        sa.Column("deal", sa.Integer, nullable=False),
        sa.Column("seat_a", sa.SmallInteger, nullable=False),
        sa.Column("win", sa.Float, nullable=False),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("void", sa.Boolean, nullable=False),
        sa.Column("knocker", sa.SmallInteger, nullable=False),
        sa.Column("gin", sa.Boolean, nullable=False),
        sa.Column("undercut", sa.Boolean, nullable=False),
        sa.Column("forfeit", sa.SmallInteger, nullable=False),
        sa.PrimaryKeyConstraint("match_id", "idx", name="pk_hands"),
    )
    op.create_table(
        "games",
        sa.Column("match_id", sa.Integer,
                  sa.ForeignKey("matches.id", name="fk_games_match_id_matches", ondelete="CASCADE"), nullable=False),
        sa.Column("idx", sa.Integer, nullable=False),
        sa.Column("deal", sa.Integer, nullable=False),
        sa.Column("seat_a", sa.SmallInteger, nullable=False),
        sa.Column("seed", sa.BigInteger),
        sa.Column("winner", sa.SmallInteger),
        sa.Column("score_a", sa.Integer, nullable=False),
        sa.Column("score_b", sa.Integer, nullable=False),
        sa.Column("hands", sa.Integer, nullable=False),
        sa.Column("log", sa.JSON),
        sa.PrimaryKeyConstraint("match_id", "idx", name="pk_games"),
    )
    op.create_table(
        "schedule",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("uid", sa.String(64), nullable=False),
        sa.Column("agent_a_id", sa.Integer, sa.ForeignKey("agents.id", name="fk_schedule_agent_a_id_agents"),
                  nullable=False),
        sa.Column("agent_b_id", sa.Integer, sa.ForeignKey("agents.id", name="fk_schedule_agent_b_id_agents"),
                  nullable=False),
        sa.Column("rules", sa.JSON, nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("hands", sa.Integer, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("worker", sa.String(100)),
        sa.Column("claimed_at", tz),
        sa.Column("created_at", tz, nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_schedule"),
        sa.UniqueConstraint("uid", name="uq_schedule_uid"),
    )
    op.create_index("ix_schedule_status", "schedule", ["status", "id"])


def downgrade() -> None:
    for table in ("schedule", "games", "hands", "matches", "agents"):
        op.drop_table(table)
