"""First-party "postgres" registrations in the claim_store and vector_store families: the
scale-out path on PostgreSQL + pgvector (R-BEYOND-4), behind the same ports and contracts.

The server is either yours — `dsn` (or `dsn_env`, the name of an environment variable that
holds it, so a password never sits in the config file) — or an embedded one (`embedded =
true`) that the stores start under `<data_dir>/postgres` from the `postgres` extra and stop
when the last of them closes. Registered through the `agent_memory` entry-point group like
any third-party plugin (R-ARCH-3). psycopg is imported only when a factory runs, so
installations without the `postgres` extra still load the plugin table; choosing "postgres"
without it is a ConfigError naming the extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from memory_core.domain.errors import ConfigError
from memory_plugins.config import structure_options
from memory_plugins.context import FactoryContext
from memory_plugins.hookspecs import Register, hookimpl

if TYPE_CHECKING:
    from memory_adapters.postgres_store import PostgresClaimStore, PostgresVectorStore

__all__ = [
    "EMBEDDED_DIRECTORY",
    "PostgresClaimStoreOptions",
    "PostgresVectorStoreOptions",
    "agent_memory_register_claim_stores",
    "agent_memory_register_vector_stores",
]

EMBEDDED_DIRECTORY = "postgres"


def _positive(instance: object, attribute: attrs.Attribute, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{attribute.name} must be > 0")


@attrs.frozen(kw_only=True)
class _Connection:
    """Where the database is; exactly one of `dsn`, `dsn_env`, `embedded`."""

    dsn: str | None = None  # libpq connection string or URI
    dsn_env: str | None = None  # environment variable holding the DSN (keeps passwords out)
    embedded: bool = False  # start a private server under <data_dir>/postgres
    embedded_user: str | None = None  # the unprivileged account it runs as, when we are root
    schema: str = "agent_memory"  # one deployment per schema; several may share a database
    lock_timeout_ms: int = attrs.field(default=10_000, validator=_positive)


@attrs.frozen(kw_only=True)
class PostgresClaimStoreOptions(_Connection):
    """`[plugins.claim_store.options]` of the "postgres" store."""

    statement_timeout_ms: int = attrs.field(default=30_000, validator=_positive)
    vacuum_after_forget: bool = True  # prune a forgotten row's dead tuple at once (R-PRIV-3)
    repair_on_open: bool = True


@attrs.frozen(kw_only=True)
class PostgresVectorStoreOptions(_Connection):
    """`[plugins.vector_store.options]` of the "postgres" store."""

    # How long an interrupted call may take to settle before its connection is dropped.
    grace_seconds: float = attrs.field(default=5.0, validator=_positive)


def _adapters() -> Any:
    try:
        from memory_adapters import postgres_store
    except ImportError as exc:
        raise ConfigError(
            "the postgres stores need the optional dependency: pip install 'agent-memory[postgres]'"
        ) from exc
    return postgres_store


def _connect(
    context: FactoryContext, options: _Connection, family: str, **timeouts: int
) -> tuple[Any, Callable[[], None] | None]:
    """Connection settings and, for an embedded server, the release of its lease."""
    store = _adapters()
    sources = [options.dsn is not None, options.dsn_env is not None, options.embedded]
    if sum(sources) != 1:
        raise ConfigError(f"plugins.{family}.options: set exactly one of dsn, dsn_env, embedded")
    release = None
    if options.embedded:
        lease = store.lease_embedded(
            context.data_dir / EMBEDDED_DIRECTORY, run_as=options.embedded_user
        )
        dsn, release = lease.dsn, lease.release
    elif options.dsn_env is not None:
        dsn = os.environ.get(options.dsn_env, "")
        if not dsn:
            raise ConfigError(f"plugins.{family}.options.dsn_env: ${options.dsn_env} is not set")
    else:
        dsn = options.dsn
    settings = store.ConnectionSettings(
        dsn=dsn, schema=options.schema, lock_timeout_ms=options.lock_timeout_ms, **timeouts
    )
    return settings, release


def _make_claim_store(context: FactoryContext) -> PostgresClaimStore:
    options = structure_options(context.options, PostgresClaimStoreOptions, family="claim_store")
    if context.secret_policy is None or context.domain_clock is None:
        raise ConfigError("plugins.claim_store: needs the secret policy and the domain clock")
    settings, release = _connect(
        context, options, "claim_store", statement_timeout_ms=options.statement_timeout_ms
    )
    try:
        store = _adapters().PostgresClaimStore(
            settings,
            secret_policy=context.secret_policy,
            clock=context.domain_clock,
            vacuum_after_forget=options.vacuum_after_forget,
            on_close=release,
        )
    except BaseException:
        if release is not None:
            release()
        raise
    if options.repair_on_open:
        try:
            store.repair(now=context.domain_clock.now())
        except BaseException:
            store.close()
            raise
    return store


def _make_vector_store(context: FactoryContext) -> PostgresVectorStore:
    options = structure_options(context.options, PostgresVectorStoreOptions, family="vector_store")
    settings, release = _connect(context, options, "vector_store")
    try:
        return _adapters().PostgresVectorStore(
            settings, grace_seconds=options.grace_seconds, on_close=release
        )
    except BaseException:
        if release is not None:
            release()
        raise


@hookimpl
def agent_memory_register_claim_stores(register: Register) -> None:
    register(
        "postgres",
        _make_claim_store,
        description="PostgreSQL: claims, trigram substring search, tombstones, directives, "
        "clear jobs; shared by many processes (the postgres extra).",
        # networked: its calls wait on a server, so the read path runs them off the loop.
        capabilities=("fts", "directives", "clear-jobs", "shared", "networked"),
    )


@hookimpl
def agent_memory_register_vector_stores(register: Register) -> None:
    register(
        "postgres",
        _make_vector_store,
        description="pgvector: exact cosine scan per agent namespace; shared by many "
        "processes (the postgres extra).",
        capabilities=("persistent", "exact", "shared"),
    )
