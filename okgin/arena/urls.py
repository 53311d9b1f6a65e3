"""Database URLs of the results store, checked without importing SQLAlchemy (evaluate.py checks --db at once)."""

from __future__ import annotations

import os


def resolve_url(text: str) -> str:
    """The SQLAlchemy URL of ``text``: a URL as given (``postgresql://`` as ``postgresql+psycopg://``), a bare
    path as a SQLite file. Raises ValueError for an empty string or a database okgin does not support."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the store needs a database: a SQLite file path or a URL such as "
                         "sqlite:///runs/arena.sqlite or postgresql+psycopg://user@host/db")
    text = text.strip()
    if "://" not in text:
        return "sqlite:///" + os.path.abspath(text)
    scheme = text.split("://", 1)[0]
    if scheme in ("postgresql", "postgres"):
        return "postgresql+psycopg://" + text.split("://", 1)[1]
    if scheme not in ("sqlite", "sqlite+pysqlite", "postgresql+psycopg"):
        raise ValueError(f"unsupported database URL scheme {scheme!r}: use a SQLite path (sqlite:///PATH) or "
                         "postgresql+psycopg://user@host/db")
    return text
