"""A throwaway PostgreSQL for test suites: one per test session, a fresh schema per test.

Plugin authors and our own tests run the contract suites against the PostgreSQL stores with
it (docs/scale-out.md). The server lives in a new temporary directory, runs without fsync
(nothing here must survive a crash), as the unprivileged `nobody` account when the tests
run as root, and is stopped and deleted by the cleanup registered on the session.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from memory_adapters.postgres_store.connection import ConnectionSettings
from memory_adapters.postgres_store.embedded import EmbeddedPostgres

__all__ = ["ThrowawayServer", "throwaway_server"]

_FALLBACK_ACCOUNT = "nobody"
_PREFIX = "agent-memory-pgtest-"
_OWNER_FILE = "owner.pid"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _reap_orphans() -> None:
    """Stop and delete throwaway servers whose test process died without its cleanup (a
    killed run); servers of live sessions are left alone."""
    for root in Path(tempfile.gettempdir()).glob(f"{_PREFIX}*"):
        try:
            owner = int((root / _OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue
        if _alive(owner):
            continue
        with contextlib.suppress(Exception):
            EmbeddedPostgres(root / "data", run_as=_account()).stop(force=True)
        shutil.rmtree(root, ignore_errors=True)


def _account() -> str | None:
    return _FALLBACK_ACCOUNT if os.geteuid() == 0 else None


class _Session(Protocol):
    def add_cleanup(self, func: Callable[[], object]) -> None: ...


class ThrowawayServer:
    """A started server plus a source of fresh, never reused schema names."""

    def __init__(self) -> None:
        _reap_orphans()
        self.root = Path(tempfile.mkdtemp(prefix=_PREFIX))
        (self.root / _OWNER_FILE).write_text(str(os.getpid()))
        if os.geteuid() == 0:
            shutil.chown(self.root, user=_FALLBACK_ACCOUNT)
        self.root.chmod(0o700)
        try:
            self.server = EmbeddedPostgres(self.root / "data", run_as=_account(), durable=False)
            self.server.start()
            self.dsn = self.server.ensure_database("agent_memory_test")
        except BaseException:
            # Fail loudly with the server's own reason, leaving nothing behind.
            shutil.rmtree(self.root, ignore_errors=True)
            raise
        self._names = itertools.count(1)

    def settings(self, **overrides: object) -> ConnectionSettings:
        """Connection settings on a schema no other caller has used."""
        overrides.setdefault("schema", f"t{next(self._names)}_{os.getpid()}")
        return ConnectionSettings(dsn=self.dsn, **overrides)  # type: ignore[arg-type]

    def close(self) -> None:
        try:
            self.server.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


_LOCK = threading.Lock()
_SERVERS: dict[int, ThrowawayServer] = {}


def throwaway_server(session: _Session) -> ThrowawayServer:
    """The session's server, started on first use; stopped by the session's cleanup.

    `session` is anything with `add_cleanup` — a pytest `Config` in practice — so every
    test module of one run shares a single server however its fixtures are scoped.
    """
    with _LOCK:
        key = id(session)
        if key not in _SERVERS:
            server = ThrowawayServer()
            _SERVERS[key] = server

            def stop() -> None:
                with _LOCK:
                    _SERVERS.pop(key, None)
                server.close()

            session.add_cleanup(stop)
        return _SERVERS[key]
