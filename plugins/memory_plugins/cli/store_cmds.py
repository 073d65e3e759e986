"""`agent-memory remember|list|forget|delete|restore|clear|retire|directive` (R-HOST-2).

The claim store, the clock and the secret policy are built through the plugin registry from
the config's choices (never by importing an adapter), so the CLI works with any installed
`claim_store` plugin. Every command prints text, or one JSON document with `--json`.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim, ClaimDraft, WriteOrigin
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.errors import AgentMemoryError, ConfigError, ValidationError
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.domain.serialization import unstructure
from memory_core.ports.claims import ClaimStore, ClearPhase, InsertStatus
from memory_core.ports.clock import DomainClock, InfraClock
from memory_plugins.cli.context import CommandContext
from memory_plugins.context import FactoryContext

if TYPE_CHECKING:
    from memory_plugins.cli.main import CommandTable

__all__ = ["open_claim_store", "register"]

_VECTOR_DROP_SECONDS = 30.0


# --- opening the store through the registry ---------------------------------------------
def _choice(ctx: CommandContext, family: str) -> Any:
    choice = ctx.config.choice(family)
    if choice is None:
        raise ConfigError(f"plugins.{family}: no plugin chosen")
    return choice


def _base(ctx: CommandContext) -> FactoryContext:
    return FactoryContext(data_dir=ctx.data_dir, settings=ctx.config.settings)


def _clock(ctx: CommandContext) -> DomainClock:
    choice = _choice(ctx, "clock")
    context = attrs.evolve(_base(ctx), options=choice.options)
    return ctx.plugins.registry.create_domain_clock(choice.name, context)


@contextlib.contextmanager
def open_claim_store(ctx: CommandContext) -> Iterator[tuple[ClaimStore, DomainClock]]:
    """The configured claim store (and its clock), closed on exit."""
    registry = ctx.plugins.registry
    clock = _clock(ctx)
    policy_choice = _choice(ctx, "secret_policy")
    policy = registry.create_secret_policy(
        policy_choice.name,
        attrs.evolve(_base(ctx), options=policy_choice.options, domain_clock=clock),
    )
    store_choice = _choice(ctx, "claim_store")
    store = registry.create_claim_store(
        store_choice.name,
        attrs.evolve(
            _base(ctx), options=store_choice.options, domain_clock=clock, secret_policy=policy
        ),
    )
    try:
        yield store, clock
    finally:
        store.close()


async def _drop_vectors(ctx: CommandContext, clock: DomainClock, agent_id: str) -> str:
    """Drop the agent's vector namespace through the configured vector store, if any.
    Failure is reported, not raised: orphans are removed at the next warm-up (R-VEC-4)."""
    choice = ctx.config.choice("vector_store")
    if choice is None or not isinstance(clock, InfraClock):
        return "deferred"
    try:
        vectors = ctx.plugins.registry.create_vector_store(
            choice.name, attrs.evolve(_base(ctx), options=choice.options, infra_clock=clock)
        )
    except AgentMemoryError:
        return "deferred"
    try:
        deadline = Deadline.after(clock, _VECTOR_DROP_SECONDS)
        await vectors.drop_agent(agent_id, deadline=deadline, cancel=CancellationToken())
        return "dropped"
    except AgentMemoryError:
        return "deferred"
    finally:
        await vectors.aclose()


# --- rendering --------------------------------------------------------------------------
def _claim_row(claim: Claim) -> tuple[object, ...]:
    preview = claim.content if len(claim.content) <= 60 else claim.content[:57] + "..."
    return (claim.id, claim.kind.value, str(claim.scope), claim.lifecycle.value, preview)


def _directive_row(directive: Directive) -> tuple[object, ...]:
    return (
        directive.id,
        directive.kind.value,
        directive.status.value,
        directive.topic or "",
        directive.content,
    )


def _claim_result(ctx: CommandContext, action: str, claim: Claim) -> int:
    if ctx.out.json_mode:
        ctx.out.document({"action": action, "claim": unstructure(claim)})
    else:
        ctx.out.line(f"{action}: {claim.id} ({claim.lifecycle.value})")
    return 0


# --- claim commands ---------------------------------------------------------------------
def _remember(ctx: CommandContext) -> int:
    args = ctx.args
    if args.scope == "session" and not args.session:
        raise ValidationError("--session", "required with --scope session")
    scope = Scope.session(args.session) if args.scope == "session" else Scope.agent()
    # Only an explicit user re-authorisation may bring back forgotten text (R-WRITE-5).
    origin = WriteOrigin.USER_ADD if args.user_add else WriteOrigin.IMPORT
    with open_claim_store(ctx) as (store, clock):
        draft = ClaimDraft(agent_id=args.agent, kind=args.kind, content=args.text, scope=scope)
        outcome = store.insert(draft, origin=origin, now=clock.now())
    if ctx.out.json_mode:
        ctx.out.document(
            {
                "status": outcome.status.value,
                "claim": unstructure(outcome.claim) if outcome.claim else None,
                "released_tombstones": outcome.released_tombstones,
            }
        )
    elif outcome.status is InsertStatus.SUPPRESSED:
        ctx.out.line("suppressed: this text was forgotten; use --user-add to re-authorise it")
    elif outcome.claim is not None:
        ctx.out.line(outcome.claim.id)
        if outcome.status is InsertStatus.DUPLICATE:
            ctx.out.line("(already remembered)", style="dim")
    return 0


def _list(ctx: CommandContext) -> int:
    args = ctx.args
    scope_filter = (
        ScopeFilter.from_context(ScopeContext(session_id=args.session)) if args.session else None
    )
    with open_claim_store(ctx) as (store, _clock):
        claims = store.list_claims(
            args.agent, scope_filter=scope_filter, include_inactive=args.all, limit=args.limit
        )
    if ctx.out.json_mode:
        ctx.out.document({"claims": [unstructure(claim) for claim in claims]})
    else:
        ctx.out.table(
            ("id", "kind", "scope", "lifecycle", "content"),
            [_claim_row(claim) for claim in claims],
            title=f"Claims of {args.agent} ({len(claims)})",
        )
    return 0


def _forget(ctx: CommandContext) -> int:
    with open_claim_store(ctx) as (store, clock):
        claim = store.archive(ctx.args.agent, ctx.args.id, now=clock.now())
    return _claim_result(ctx, "archived (recoverable with `restore`)", claim)


def _restore(ctx: CommandContext) -> int:
    with open_claim_store(ctx) as (store, clock):
        claim = store.restore(ctx.args.agent, ctx.args.id, now=clock.now())
    return _claim_result(ctx, "restored", claim)


def _delete(ctx: CommandContext) -> int:
    with open_claim_store(ctx) as (store, clock):
        outcome = store.delete(ctx.args.agent, ctx.args.id, now=clock.now())
    if ctx.out.json_mode:
        ctx.out.document({"deleted": outcome.claim_id, "tombstones": outcome.tombstones_written})
    else:
        ctx.out.line(f"deleted: {outcome.claim_id} (replays are suppressed)")
    return 0


def _clear(ctx: CommandContext) -> int:
    agent = ctx.args.agent
    batches: list[int] = []
    with open_claim_store(ctx) as (store, clock):
        progress = store.begin_clear(agent, now=clock.now())
        while progress.phase is ClearPhase.CLAIMS:
            progress = store.run_clear_batch(agent)
            batches.append(progress.batch_removed)
            if not ctx.out.json_mode:
                ctx.out.line(f"cleared {progress.removed_count} rows", style="dim")
        vectors = asyncio.run(_drop_vectors(ctx, clock, agent))
        store.finish_clear(agent)
    if ctx.out.json_mode:
        ctx.out.document(
            {"agent": agent, "removed": progress.removed_count, "batches": batches,
             "vectors": vectors}
        )  # fmt: skip
    else:
        ctx.out.line(f"clear done: {progress.removed_count} rows removed; vectors {vectors}")
    return 0


def _retire(ctx: CommandContext) -> int:
    agent = ctx.args.agent
    with open_claim_store(ctx) as (store, clock):
        vectors = asyncio.run(_drop_vectors(ctx, clock, agent))
        store.retire_agent(agent)
    if ctx.out.json_mode:
        ctx.out.document({"retired": agent, "vectors": vectors})
    else:
        ctx.out.line(
            f"retired: {agent} (claims, directives, tombstones, lineage); vectors {vectors}"
        )
    return 0


# --- directives -------------------------------------------------------------------------
def _directive_write(ctx: CommandContext) -> int:
    args = ctx.args
    kind = DirectiveKind.SUPPRESS_TOPIC if args.topic else DirectiveKind.INSTRUCTION
    with open_claim_store(ctx) as (store, clock):
        write = store.create_directive if args.action == "add" else store.suggest_directive
        directive = write(args.agent, kind, args.text, topic=args.topic, now=clock.now())
    if ctx.out.json_mode:
        ctx.out.document({"directive": unstructure(directive) if directive else None})
    elif directive is None:
        ctx.out.line("already suggested before (a rejected suggestion stays rejected)")
    else:
        ctx.out.line(f"{directive.id} ({directive.status.value})")
    return 0


def _directive_status(ctx: CommandContext) -> int:
    status = DirectiveStatus.ACTIVE if ctx.args.action == "approve" else DirectiveStatus.REJECTED
    with open_claim_store(ctx) as (store, clock):
        directive = store.set_directive_status(ctx.args.agent, ctx.args.id, status, now=clock.now())
    if ctx.out.json_mode:
        ctx.out.document({"directive": unstructure(directive)})
    else:
        ctx.out.line(f"{directive.id} ({directive.status.value})")
    return 0


def _directive_list(ctx: CommandContext) -> int:
    status = DirectiveStatus(ctx.args.status) if ctx.args.status else None
    with open_claim_store(ctx) as (store, _clock):
        directives = store.list_directives(ctx.args.agent, status=status)
    if ctx.out.json_mode:
        ctx.out.document({"directives": [unstructure(d) for d in directives]})
    else:
        ctx.out.table(
            ("id", "kind", "status", "topic", "content"),
            [_directive_row(d) for d in directives],
            title=f"Directives of {ctx.args.agent} ({len(directives)})",
        )
    return 0


# --- argparse -----------------------------------------------------------------------------
def _with_agent(parser: Any) -> Any:
    parser.add_argument("--agent", required=True, help="the owning agent id")
    return parser


def register(subparsers: CommandTable) -> None:
    remember = _with_agent(subparsers.add_parser("remember", help="store one claim"))
    remember.add_argument("text", help="what to remember")
    remember.add_argument("--session", help="session id (for --scope session)")
    remember.add_argument("--scope", choices=("agent", "session"), default="agent")
    remember.add_argument("--kind", choices=("semantic", "episodic"), default="semantic")
    remember.add_argument(
        "--user-add", action="store_true", help="explicit user add: re-authorises forgotten text"
    )
    remember.set_defaults(func=_remember)

    listing = _with_agent(subparsers.add_parser("list", help="list an agent's claims"))
    listing.add_argument("--all", action="store_true", help="include archived and superseded")
    listing.add_argument(
        "--session", help="only Agent-scope claims and those of this session (default: all)"
    )
    listing.add_argument("--limit", type=int, default=100)
    listing.set_defaults(func=_list)

    for name, func, text in (
        ("forget", _forget, "archive a claim (recoverable)"),
        ("restore", _restore, "restore an archived claim"),
        ("delete", _delete, "delete a claim for good (tombstoned)"),
    ):
        parser = _with_agent(subparsers.add_parser(name, help=text))
        parser.add_argument("id", help="claim id")
        parser.set_defaults(func=func)

    clear = _with_agent(subparsers.add_parser("clear", help="forget all of an agent's claims"))
    clear.set_defaults(func=_clear)
    retire = _with_agent(subparsers.add_parser("retire", help="delete an agent's namespace"))
    retire.set_defaults(func=_retire)

    directive = subparsers.add_parser("directive", help="manage directives (the trust plane)")
    actions = directive.add_subparsers(dest="action", metavar="ACTION", required=True)
    # Nested parsers take the global options too (`directive list --agent A --json`).
    parents = [subparsers.global_options]
    for name, text in (("add", "create an active directive"), ("suggest", "add a draft")):
        parser = _with_agent(actions.add_parser(name, help=text, parents=parents))
        parser.add_argument("text", help="directive text")
        parser.add_argument("--topic", help="makes it a suppress_topic directive")
        parser.set_defaults(func=_directive_write)
    for name in ("approve", "reject"):
        parser = _with_agent(actions.add_parser(name, help=f"{name} a draft", parents=parents))
        parser.add_argument("id", help="directive id")
        parser.set_defaults(func=_directive_status)
    listing = _with_agent(actions.add_parser("list", help="list directives", parents=parents))
    listing.add_argument("--status", choices=[s.value for s in DirectiveStatus])
    listing.set_defaults(func=_directive_list)
