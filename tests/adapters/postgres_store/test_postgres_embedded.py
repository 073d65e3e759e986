"""The embedded PostgreSQL launcher: never as root, shared per data directory, stopped by the
last lease, and a server log that never holds claim content."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memory_adapters.postgres_store import EmbeddedPostgres, lease_embedded
from memory_adapters.postgres_store.testing import ThrowawayServer
from memory_core.domain.errors import ConfigError

ACCOUNT = "nobody" if os.geteuid() == 0 else None


@pytest.fixture
def private_dir() -> Iterator[Path]:
    """A directory the server account may enter (pytest's tmp_path is root-only)."""
    root = Path(tempfile.mkdtemp(prefix="agent-memory-embedded-"))
    if ACCOUNT is not None:
        shutil.chown(root, user=ACCOUNT)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _running(data_dir: Path) -> bool:
    pg_ctl = EmbeddedPostgres(data_dir, run_as=ACCOUNT).bin_dir / "pg_ctl"
    status = subprocess.run(
        [str(pg_ctl), "-D", str(data_dir), "status"],
        capture_output=True,
        check=False,
        **({"user": ACCOUNT} if ACCOUNT else {}),  # type: ignore[arg-type]
    )
    return status.returncode == 0


def test_postgres_is_never_started_as_root(tmp_path: Path) -> None:
    """PostgreSQL refuses root; as root the launcher demands an unprivileged account up
    front, with a configuration error naming the option."""
    if os.geteuid() == 0:
        with pytest.raises(ConfigError, match="embedded_user"):
            EmbeddedPostgres(tmp_path / "data")
        with pytest.raises(ConfigError):
            EmbeddedPostgres(tmp_path / "data", run_as="root")
    else:  # an unprivileged process simply runs the server as itself
        EmbeddedPostgres(tmp_path / "data", run_as="root")


def test_leases_share_one_server_and_the_last_release_stops_it(private_dir: Path) -> None:
    """The claim and vector stores of one deployment lease the same server."""
    data = private_dir / "postgres"
    first = lease_embedded(data, run_as=ACCOUNT, durable=False)
    second = lease_embedded(data, run_as=ACCOUNT, durable=False)
    try:
        assert first.server is second.server and first.dsn == second.dsn
        with psycopg.connect(first.dsn) as conn:
            assert conn.execute("SELECT current_database()").fetchone() == ("agent_memory",)
        first.release()
        first.release()  # idempotent: never releases someone else's hold
        assert _running(data)
    finally:
        second.release()
    assert not _running(data)


def test_the_server_log_never_holds_claim_content(postgres: ThrowawayServer) -> None:
    """R-PRIV-1: failing statements are not logged, nor their "Failing row contains (…)"."""
    marker = "LOGMARKER-7F3A"
    schema = postgres.settings().schema
    with psycopg.connect(postgres.dsn, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        conn.execute(f"CREATE TABLE {schema}.t (content text CHECK (length(content) < 5))")
        with pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(f"INSERT INTO {schema}.t VALUES ('{marker}')")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            conn.execute(f"SELECT '{marker}'::int")
    log = (postgres.server.data_dir / "server.log").read_bytes()
    assert marker.encode() not in log
