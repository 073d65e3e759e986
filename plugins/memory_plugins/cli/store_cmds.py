"""`agent-memory remember|list|forget|delete|restore|clear|retire|directive` (R-HOST-2).

Each command is a client of `MemoryService`, opened through `open_memory` like any host's
(see `memory.call`), so it works with any installed plugins and takes the same path as the
API: `remember` takes the agent's write lock and is embedded before the command exits;
`delete` fences work in flight and removes the claim's vector too (R-FORGET-1); `clear`
and `retire` are the service's own jobs. Every command prints text, or one JSON document
with `--json`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memory_core.domain.claims import DEFAULT_IMPORTANCE, Claim, ClaimKind
from memory_core.domain.directives import Directive, DirectiveKind, DirectiveStatus
from memory_core.domain.errors import ValidationError
from memory_core.domain.scope import Scope, ScopeContext, ScopeFilter
from memory_core.domain.serialization import unstructure
from memory_core.services.memory import ClearProgress, ClearResult, RememberStatus
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import call

if TYPE_CHECKING:
    from memory_plugins.cli.main import CommandTable

__all__ = ["register"]

# The JSON documents keep the store's insert vocabulary they have always printed.
_STATUS_WORDS = {
    RememberStatus.STORED: "inserted",
    RememberStatus.ALREADY_KNOWN: "duplicate",
    RememberStatus.REQUIRES_USER_REAUTHORIZATION: "suppressed",
}


def _vectors(dropped: bool) -> str:
    # A drop the vector store could not do now is finished at the next warm-up (R-VEC-4).
    return "dropped" if dropped else "deferred"


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
    result = call(
        ctx,
        lambda memory: memory.remember(
            args.agent,
            args.text,
            session_id=args.session,
            scope=scope,
            user_add=args.user_add,
            kind=ClaimKind(args.kind),
            importance=DEFAULT_IMPORTANCE,
        ),
    )
    if ctx.out.json_mode:
        ctx.out.document(
            {
                "status": _STATUS_WORDS[result.status],
                "claim": unstructure(result.claim) if result.claim else None,
                "released_tombstones": result.released_tombstones,
            }
        )
    elif result.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION:
        ctx.out.line("suppressed: this text was forgotten; use --user-add to re-authorise it")
    else:
        ctx.out.line(str(result.claim_id))
        if result.status is RememberStatus.ALREADY_KNOWN:
            ctx.out.line("(already remembered)", style="dim")
    return 0


def _list(ctx: CommandContext) -> int:
    args = ctx.args
    scope_filter = (
        ScopeFilter.from_context(ScopeContext(session_id=args.session)) if args.session else None
    )
    claims = call(
        ctx,
        lambda memory: memory.list_claims(
            args.agent, scope_filter=scope_filter, include_inactive=args.all, limit=args.limit
        ),
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
    result = call(ctx, lambda memory: memory.forget(ctx.args.agent, ctx.args.id))
    return _claim_result(ctx, "archived (recoverable with `restore`)", result.claim)


def _restore(ctx: CommandContext) -> int:
    claim = call(ctx, lambda memory: memory.restore(ctx.args.agent, ctx.args.id))
    return _claim_result(ctx, "restored", claim)


def _delete(ctx: CommandContext) -> int:
    claim_id = ctx.args.id
    tombstones = call(ctx, lambda memory: memory.delete(ctx.args.agent, claim_id))
    if ctx.out.json_mode:
        ctx.out.document({"deleted": claim_id, "tombstones": tombstones})
    else:
        ctx.out.line(f"deleted: {claim_id} (replays are suppressed)")
    return 0


def _clear(ctx: CommandContext) -> int:
    agent = ctx.args.agent
    batches: list[int] = []

    def progress(job: ClearProgress) -> None:
        if isinstance(job, ClearResult):
            return  # the finished job is reported below
        batches.append(job.batch_removed)
        if not ctx.out.json_mode:
            ctx.out.line(f"cleared {job.removed_count} rows", style="dim")

    done = call(ctx, lambda memory: memory.clear(agent, progress=progress))
    vectors = _vectors(done.vectors_dropped)
    if ctx.out.json_mode:
        ctx.out.document(
            {"agent": agent, "removed": done.removed_count, "batches": batches,
             "vectors": vectors}
        )  # fmt: skip
    else:
        ctx.out.line(f"clear done: {done.removed_count} rows removed; vectors {vectors}")
    return 0


def _retire(ctx: CommandContext) -> int:
    agent = ctx.args.agent
    vectors = _vectors(call(ctx, lambda memory: memory.retire(agent)))
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
    directive = call(
        ctx,
        lambda memory: (
            memory.create_directive if args.action == "add" else memory.suggest_directive
        )(args.agent, kind, args.text, topic=args.topic),
    )
    if ctx.out.json_mode:
        ctx.out.document({"directive": unstructure(directive) if directive else None})
    elif directive is None:
        ctx.out.line("already suggested before (a rejected suggestion stays rejected)")
    else:
        ctx.out.line(f"{directive.id} ({directive.status.value})")
    return 0


def _directive_status(ctx: CommandContext) -> int:
    args = ctx.args
    directive = call(
        ctx,
        lambda memory: (
            memory.approve_directive if args.action == "approve" else memory.reject_directive
        )(args.agent, args.id),
    )
    if ctx.out.json_mode:
        ctx.out.document({"directive": unstructure(directive)})
    else:
        ctx.out.line(f"{directive.id} ({directive.status.value})")
    return 0


def _directive_list(ctx: CommandContext) -> int:
    status = DirectiveStatus(ctx.args.status) if ctx.args.status else None
    directives = call(ctx, lambda memory: memory.list_directives(ctx.args.agent, status=status))
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
