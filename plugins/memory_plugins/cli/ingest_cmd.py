"""`agent-memory ingest`: extract memories from a JSONL tape, session by session (R-HOST-2).

The file *is* the tape (docs/tape-format.md), opened through the registry's `jsonl` tape,
and ingested exactly as a host's settled turn would be: one `after_turn_settled` per
session, then a wait until the background extraction settles. Memory appends its
content-free `memory/extract` anchors to the file and keeps an extraction cursor per
session, so running the command again ingests only what was added since.

What each chunk did (stored, superseded, suppressed, duplicates, rejected) is read from those
anchors as they are written (`ExtractLog`), so the counts are exact however many passes a
long session takes. The demo reuses the pieces here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.claims import Claim
from memory_core.domain.errors import ConfigError, NotFound, ValidationError
from memory_core.domain.serialization import unstructure
from memory_core.domain.temporal_policy import assess
from memory_core.ports.tape import (
    Anchor,
    AnchorKind,
    ManifestRecord,
    MessageSourceSpan,
    ProjectionRange,
    TapeEntry,
)
from memory_core.services.memory import MemoryService
from memory_core.services.write.ingestion.types import TurnOutcome, TurnStatus
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import opened
from memory_plugins.cli.output import Output
from memory_plugins.config import PluginChoice
from memory_plugins.context import FactoryContext

__all__ = [
    "ClaimView",
    "ExtractLog",
    "IngestSummary",
    "claim_view",
    "ingest_session",
    "progress_bar",
    "register",
    "render_claims",
    "render_sessions",
    "run",
]

EXTRACTORS = ("rules", "llm", "verbatim")


# --- views ---------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class ClaimView:
    """A claim as a person reads it: the temporal policy's label at `now`, and its status."""

    id: str
    kind: str
    content: str
    temporal: str  # "current state", "previously planned", ... or "timeless"
    status: str  # active | superseded | archived | conflicted
    scope: str


def claim_view(claim: Claim, now: datetime) -> ClaimView:
    label = assess(claim.temporal, now).label
    return ClaimView(
        id=claim.id,
        kind=claim.kind.value,
        content=claim.content,
        temporal=label or "timeless",
        status="superseded" if claim.superseded_by else claim.lifecycle.value,
        scope=str(claim.scope),
    )


@attrs.frozen(kw_only=True)
class IngestSummary:
    """One session's ingestion: the last pass's outcome and the sum of every chunk's work."""

    session: str
    outcome: str
    chunks: int = 0
    stored: tuple[str, ...] = ()
    superseded: tuple[tuple[str, str], ...] = ()  # (retired id, successor id)
    duplicates: int = 0
    suppressed: int = 0  # forgotten text said again: refused by its tombstone (R-FORGET-1)
    revived: tuple[str, ...] = ()  # retired rows the conversation returned to, live again
    rejected: dict[str, int] = attrs.field(factory=dict)  # reason -> count (secret, ...)
    directive_drafts: tuple[str, ...] = ()
    error: str | None = None  # an exception type name, never a message


def _summarise(
    session: str, outcome: str, error: str | None, payloads: Sequence[Mapping[str, Any]]
) -> IngestSummary:
    rejected: dict[str, int] = {}
    for payload in payloads:
        for reason, count in dict(payload.get("rejected", {})).items():
            rejected[reason] = rejected.get(reason, 0) + int(count)
    return IngestSummary(
        session=session,
        outcome=outcome,
        chunks=len(payloads),
        stored=tuple(i for p in payloads for i in p.get("memoryIds", ())),
        superseded=tuple((old, new) for p in payloads for old, new in p.get("superseded", ())),
        duplicates=sum(int(p.get("duplicates", 0)) for p in payloads),
        suppressed=sum(int(p.get("suppressed", 0)) for p in payloads),
        revived=tuple(i for p in payloads for i in p.get("revived", ())),
        rejected=dict(sorted(rejected.items())),
        directive_drafts=tuple(i for p in payloads for i in p.get("directiveDrafts", ())),
        error=error,
    )


# --- ingestion ------------------------------------------------------------------------------
class ExtractLog:
    """A tape that passes every call through and keeps each `memory/extract` anchor's payload
    (ids and counts of one chunk's work) for the summary."""

    def __init__(self, tape: Any) -> None:
        self.tape = tape
        self._records: list[tuple[str, str, Mapping[str, Any]]] = []

    def take(self, agent_id: str, session_id: str) -> list[Mapping[str, Any]]:
        """The payloads recorded for this session since the last `take`."""
        mine = [p for a, s, p in self._records if (a, s) == (agent_id, session_id)]
        self._records = [r for r in self._records if (r[0], r[1]) != (agent_id, session_id)]
        return mine

    async def append(self, anchor: Anchor, *, deadline: Deadline, cancel: CancellationToken) -> str:
        if anchor.kind is AnchorKind.EXTRACT:
            # Recorded first: the work is done even if the tape fails to keep its anchor.
            self._records.append((anchor.agent_id, anchor.session_id, dict(anchor.payload)))
        return await self.tape.append(anchor, deadline=deadline, cancel=cancel)

    async def get_by_session(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> Sequence[TapeEntry]:
        return await self.tape.get_by_session(session_id, deadline=deadline, cancel=cancel)

    async def read_current_range(
        self,
        session_id: str,
        after_order_seq: int,
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> ProjectionRange:
        return await self.tape.read_current_range(
            session_id, after_order_seq, deadline=deadline, cancel=cancel
        )

    async def rebuild_projection(
        self, session_id: str, *, deadline: Deadline, cancel: CancellationToken
    ) -> None:
        await self.tape.rebuild_projection(session_id, deadline=deadline, cancel=cancel)

    async def get_effective_message_source_span(
        self,
        session_id: str,
        entry_ids: Sequence[str],
        *,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> MessageSourceSpan | None:
        return await self.tape.get_effective_message_source_span(
            session_id, entry_ids, deadline=deadline, cancel=cancel
        )

    async def list_memory_view_manifests_by_agent(
        self,
        agent_id: str,
        *,
        session_id: str | None = None,
        message_id: str | None = None,
        limit: int = 50,
        deadline: Deadline,
        cancel: CancellationToken,
    ) -> Sequence[ManifestRecord]:
        return await self.tape.list_memory_view_manifests_by_agent(
            agent_id,
            session_id=session_id,
            message_id=message_id,
            limit=limit,
            deadline=deadline,
            cancel=cancel,
        )


async def ingest_session(
    memory: MemoryService, log: ExtractLog, agent_id: str, session_id: str
) -> IngestSummary:
    """Settle one turn of `session_id` as a host would and wait for its extraction."""
    runtime = memory.session(agent_id, session_id)
    log.take(agent_id, session_id)
    runtime.after_turn_settled(TurnOutcome(status=TurnStatus.COMPLETED))
    await runtime.drain()
    report = runtime.last_ingestion
    if report is None:
        raise ConfigError("plugins.extractor: ingestion is switched off (extractor 'none')")
    return _summarise(
        session_id, report.outcome.value, report.error, log.take(agent_id, session_id)
    )


@contextlib.contextmanager
def progress_bar(out: Output, description: str) -> Iterator[Callable[[int, int], None] | None]:
    """`update(completed, total)` of a progress bar on stderr for a person at a terminal;
    None for pipes and --json, so callers can skip work done only to feed the bar."""
    if out.json_mode or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task(description, total=None)
        yield lambda completed, total: progress.update(task, completed=completed, total=total)


# --- rendering ----------------------------------------------------------------------------------
def render_sessions(out: Output, summaries: Sequence[IngestSummary], *, title: str) -> None:
    out.table(
        ("session", "outcome", "stored", "superseded", "suppressed", "duplicates", "refused",
         "drafts"),
        [
            (
                s.session,
                s.outcome if s.error is None else f"{s.outcome} ({s.error})",
                len(s.stored),
                len(s.superseded),
                s.suppressed,
                s.duplicates,
                sum(s.rejected.values()),  # by reason in --json
                len(s.directive_drafts),
            )
            for s in summaries
        ],
        title=title,
        styles=("cyan", None, "green", "yellow", "magenta", "dim", "red", None),
    )  # fmt: skip


def render_claims(out: Output, views: Sequence[ClaimView], *, title: str) -> None:
    out.table(
        ("kind", "content", "temporal", "status"),
        [(v.kind, v.content, v.temporal, v.status) for v in views],
        title=title,
        styles=("dim", None, "cyan", "green"),
    )


# --- the command -----------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class _IngestDocument:
    agent: str
    tape: str
    extractor: str
    sessions: tuple[IngestSummary, ...]
    stored: tuple[ClaimView, ...]
    superseded: tuple[ClaimView, ...]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "ingest",
        help="extract memories from a JSONL tape",
        description="Extract memories from a JSONL tape (docs/tape-format.md), one session at "
        "a time, as a host's settled turn would. Memory appends its content-free "
        "memory/extract anchors to the file and keeps a cursor per session: a second run "
        "ingests only new messages.",
    )
    parser.add_argument("--agent", required=True, help="the owning agent id")
    parser.add_argument(
        "--session", action="append", help="only this session (repeatable; default: all)"
    )
    parser.add_argument(
        "--extractor", choices=EXTRACTORS, help="extractor plugin (default: the config's)"
    )
    parser.add_argument("tape", type=Path, metavar="TAPE.jsonl", help="the tape file")
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    return asyncio.run(_ingest(ctx))


async def _ingest(ctx: CommandContext) -> int:
    args = ctx.args
    path = Path(args.tape).expanduser()
    if not path.is_file():
        raise ValidationError("TAPE", f"no such file: {path}")
    config = ctx.config
    if args.extractor:
        config = attrs.evolve(
            config, plugins={**config.plugins, "extractor": PluginChoice(name=args.extractor)}
        )
    extractor = config.choice("extractor")
    registry = ctx.plugins.registry
    tape = registry.create_tape(
        "jsonl",
        FactoryContext(
            data_dir=ctx.data_dir, settings=config.settings, options={"path": str(path.resolve())}
        ),
    )
    try:
        sessions = args.session or _sessions_in(path)
        log = ExtractLog(tape)
        async with opened(ctx, config=config, tape=log) as memory:
            summaries = []
            with progress_bar(ctx.out, "Ingesting") as update:
                for session in sessions:
                    summaries.append(await ingest_session(memory, log, args.agent, session))
                    if update is not None:
                        update(len(summaries), len(sessions))
            now = memory.now()
            stored = _views(memory, args.agent, [i for s in summaries for i in s.stored], now)
            retired = [old for s in summaries for old, _ in s.superseded]
            superseded = _views(memory, args.agent, retired, now)
    finally:
        closer = getattr(tape, "close", None)
        if callable(closer):
            closer()
    document = _IngestDocument(
        agent=args.agent,
        tape=str(path),
        extractor=extractor.name if extractor else "none",
        sessions=tuple(summaries),
        stored=tuple(stored),
        superseded=tuple(superseded),
    )
    # A session whose pass failed (a malformed tape line, a store error) fails the command:
    # a script must not read exit 0 as "all ingested" (R-HOST-2).
    failed = [s for s in summaries if s.error is not None or s.outcome == "failed"]
    if ctx.out.json_mode:
        ctx.out.document(unstructure(document))
        return 2 if failed else 0
    render_sessions(ctx.out, summaries, title=f"Ingested {path.name} for agent {args.agent}")
    render_claims(ctx.out, stored, title=f"Stored ({len(stored)})")
    if superseded:
        render_claims(ctx.out, superseded, title=f"Superseded ({len(superseded)})")
    if failed:
        names = ", ".join(f"{s.session} ({s.error or s.outcome})" for s in failed)
        ctx.out.error(ValidationError("TAPE", f"{len(failed)} session(s) failed: {names}"))
        return 2
    return 0


def _sessions_in(path: Path) -> list[str]:
    """The sessions of the tape's messages, in order of first appearance."""
    seen: dict[str, None] = {}
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn last line; the tape itself has validated the rest
            if isinstance(record, dict) and record.get("kind", "message") in (
                "message",
                "compaction",
            ):
                seen.setdefault(str(record.get("session")), None)
    return list(seen)


def _views(memory: MemoryService, agent: str, ids: Sequence[str], now: datetime) -> list[ClaimView]:
    views = []
    for claim_id in dict.fromkeys(ids):
        try:
            views.append(claim_view(memory.get_claim(agent, claim_id), now))
        except NotFound:
            continue  # deleted meanwhile
    return views
