"""The results store's schema revision, importable without SQLAlchemy (``okgin.arena.sqlite_writer`` checks it)."""

SCHEMA_REVISION = "0001"  #: the newest migration; a store at an older revision is upgraded on open
