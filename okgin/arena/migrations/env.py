"""Alembic's environment for the results store: run by ``okgin.arena.store.upgrade`` (never by hand-written
config files), on the connection the store hands over in ``config.attributes["connection"]``."""

from __future__ import annotations

from alembic import context

from okgin.arena.schema import metadata

connection = context.config.attributes.get("connection")
if connection is None:  # `alembic -x url=...` from a shell: a connection of our own
    from sqlalchemy import create_engine

    url = context.get_x_argument(as_dictionary=True).get("url") or context.config.get_main_option("sqlalchemy.url")
    with create_engine(url).connect() as connection:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
else:
    # render_as_batch: SQLite alters a table by copying it, which Alembic's batch mode does
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
