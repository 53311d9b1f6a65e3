"""The databases the arena tests run against: a SQLite file, and a real PostgreSQL.

PostgreSQL: ``OKGIN_TEST_PG_URL`` (an admin URL such as ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``)
when CI started a server; otherwise a throwaway cluster made here with Debian's ``initdb``/``pg_ctl`` in a
temporary folder on a free port (as the ``postgres`` user when the tests run as root, which initdb refuses).
Tests skip PostgreSQL only when no PostgreSQL binaries exist (.ci/run installs them, so CI never skips).
Every test gets a fresh database.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid

import pytest

pytest.importorskip("sqlalchemy", reason="the arena extra: pip install -e '.[arena]'")


def _pg_bin() -> str | None:
    for name in ("initdb",):
        found = shutil.which(name)
        if found:
            return os.path.dirname(os.path.realpath(found))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return os.path.dirname(versions[-1]) if versions else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def pg_admin_url():
    """An admin URL of a running PostgreSQL (skips when no PostgreSQL is installed)."""
    given = os.environ.get("OKGIN_TEST_PG_URL")
    if given:
        yield given
        return
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("no PostgreSQL binaries (initdb); .ci/run installs Debian's postgresql")
    root = tempfile.mkdtemp(prefix="okgin-pg-")
    data, port = os.path.join(root, "data"), _free_port()
    as_root = os.geteuid() == 0
    run = (lambda cmd: ["runuser", "-u", "postgres", "--", *cmd]) if as_root else (lambda cmd: cmd)
    if as_root:
        shutil.chown(root, "postgres")
    subprocess.run(run([os.path.join(bindir, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
                        "--no-sync", "-E", "UTF8"]), check=True, capture_output=True)
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100"
    subprocess.run(run([os.path.join(bindir, "pg_ctl"), "-D", data, "-o", opts, "-l", os.path.join(root, "log"),
                        "-w", "start"]), check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(run([os.path.join(bindir, "pg_ctl"), "-D", data, "-m", "immediate", "stop"]),
                       capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def fresh_pg_db(admin_url: str) -> str:
    """A new empty database on the server of ``admin_url``; returns its URL."""
    import sqlalchemy as sa

    name = "okgin_" + uuid.uuid4().hex[:12]
    engine = sa.create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE {name}")
    engine.dispose()
    return admin_url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request, tmp_path):
    """A fresh store URL: a SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "arena.sqlite")
    return fresh_pg_db(request.getfixturevalue("pg_admin_url"))
