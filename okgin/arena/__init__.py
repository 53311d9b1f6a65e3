"""The okgin arena: one results store for every match okgin plays, a ladder that schedules and plays
matches between registered agents, and the ratings of everyone on one scale (docs/arena.md).

* ``okgin.arena.store``: the database (SQLite file or PostgreSQL URL; SQLAlchemy 2, Alembic migrations);
* ``okgin.arena.record``: what evaluate.py and the web table write into it;
* ``okgin.arena.ratings``: Bradley-Terry over all stored results with bootstrap CIs (random = 0);
* ``okgin.arena.ladder`` / ``okgin.arena.sandbox``: the ladder and its plug-in bots' separate processes;
* ``okgin.arena.cli``: the ``okgin-arena`` command (``python -m okgin.arena``).

Needs the ``arena`` extra: ``pip install -e '.[arena]'`` in the checkout.
"""
