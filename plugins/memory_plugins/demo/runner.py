"""Plays the demo story through the public host API and returns what happened, as values.

A host's path, step by step: the bundled conversation is written to an in-process tape
(the host's record — never under the data directory, since it holds the pasted API key),
each session ingested on its own date; the user approves the draft directive; three turns
are prepared in a new session; one fact is deleted and the session that taught it is
replayed. Afterwards every file under the data directory is scanned for the key's bytes
(R-PRIV-1). Presentation is `memory_plugins.cli.demo_cmd`'s job.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import attrs

from memory_core.domain.cancellation import CancellationToken, Deadline
from memory_core.domain.directives import DirectiveKind, DirectiveStatus
from memory_core.domain.errors import ValidationError
from memory_core.services.memory import MemoryService
from memory_core.services.read.runtime import TurnContribution
from memory_plugins.api import open_memory_async
from memory_plugins.cli.contribution_cmd import ManifestSummary, manifest_summary, names_of
from memory_plugins.cli.ingest_cmd import (
    ClaimView,
    ExtractLog,
    IngestSummary,
    claim_view,
    ingest_session,
)
from memory_plugins.config import MemoryConfig, PluginChoice
from memory_plugins.context import FactoryContext
from memory_plugins.demo import scenario
from memory_plugins.demo.clock import DemoClock
from memory_plugins.loader import load_plugins

__all__ = ["DemoResult", "DemoTurn", "ForgetStep", "PrivacyCheck", "SessionRun", "run_demo"]

_LIMIT = 1_000
_PROBE_SECONDS = 30.0


class _HostTape(Protocol):
    """The host's write to its tape (every first-party tape has it)."""

    def append_message(
        self, session_id: str, role: str, content: str, *, message_id: str | None = None
    ) -> object: ...


@attrs.frozen(kw_only=True)
class SessionRun:
    session: str
    date: str  # ISO date in the demo's zone
    messages: int
    summary: IngestSummary


@attrs.frozen(kw_only=True)
class DemoTurn:
    message: str
    memory_text: str | None
    directive_text: str | None
    manifest: ManifestSummary
    names: dict[str, str]  # id -> content of what the manifest mentions (for people)


@attrs.frozen(kw_only=True)
class ForgetStep:
    claim: ClaimView
    tombstones: int
    query: str
    recalled_before: tuple[str, ...]
    recalled_after: tuple[str, ...]
    replay: IngestSummary
    back_after_replay: bool  # the deleted text is a claim again (it must not be)


@attrs.frozen(kw_only=True)
class PrivacyCheck:
    secrets_shared: int  # secret-like spans in the conversation
    files_scanned: int
    files_with_secret: tuple[str, ...]  # relative paths; must be empty


@attrs.frozen(kw_only=True)
class DemoResult:
    data_dir: str
    kept: bool
    embedder: str
    sessions: tuple[SessionRun, ...]
    extracted: tuple[ClaimView, ...]
    drafts: tuple[str, ...]  # draft directive texts as extraction suggested them
    approved: str  # the directive the user approved
    turns: tuple[DemoTurn, ...]
    forget: ForgetStep
    privacy: PrivacyCheck


async def run_demo(
    config: MemoryConfig,
    *,
    data_dir: Path | None = None,
    embedder: str | None = None,
    strict_plugins: bool = False,
) -> DemoResult:
    """Run the whole story. `data_dir` (new or empty) is kept; without it a temporary
    directory is used and removed. `embedder` overrides the config's embedding provider."""
    kept = data_dir is not None
    root = Path(data_dir) if data_dir is not None else Path(tempfile.mkdtemp(prefix="am-demo-"))
    if kept and root.exists() and any(root.iterdir()):
        raise ValidationError("--data-dir", f"{root} is not empty: the demo needs a new directory")
    clock = DemoClock(scenario.SESSION_DATES[scenario.REPLAY_SOURCE], scenario.TIMEZONE)
    registry = load_plugins(strict=strict_plugins).registry
    if embedder is not None:
        plugins = {**config.plugins, "embedding_provider": PluginChoice(name=embedder)}
        config = attrs.evolve(config, plugins=plugins)
    try:
        context = FactoryContext(data_dir=root, settings=config.settings)
        tape = registry.create_tape("memory", context)
        policy_choice = config.choice("secret_policy")
        assert policy_choice is not None
        policy = registry.create_secret_policy(policy_choice.name, context)
        log = ExtractLog(tape)
        memory = await open_memory_async(
            root, config=config, tape=log, clock=clock, registry=registry
        )
        try:
            result = await _story(memory, tape, log, clock)
        finally:
            await memory.aclose()
        conversation = scenario.load_conversation()
        secrets = [m.content[f.start : f.end] for m in conversation for f in policy.find(m.content)]
        privacy = _scan(root, secrets)
        return attrs.evolve(result, data_dir=str(root), kept=kept, privacy=privacy)
    finally:
        if not kept:
            shutil.rmtree(root, ignore_errors=True)


async def _story(
    memory: MemoryService, tape: _HostTape, log: ExtractLog, clock: DemoClock
) -> DemoResult:
    agent = scenario.AGENT_ID
    conversation = scenario.load_conversation()
    sessions = []
    for session, date in scenario.SESSION_DATES.items():
        clock.set(date)
        messages = [m for m in conversation if m.session == session]
        for message in messages:
            tape.append_message(session, message.role, message.content, message_id=message.id)
        summary = await ingest_session(memory, log, agent, session)
        sessions.append(
            SessionRun(
                session=session, date=date.date().isoformat(), messages=len(messages),
                summary=summary,
            )
        )  # fmt: skip

    clock.set(scenario.CHAT_DATE)
    now = clock.now()
    await memory.warm(agent)
    claims = {c.id: c for c in memory.list_claims(agent, include_inactive=True, limit=_LIMIT)}
    # In the order they were learnt: the table reads like the conversation.
    extracted = tuple(
        claim_view(claims[claim_id], now)
        for run in sessions
        for claim_id in run.summary.stored
        if claim_id in claims
    )

    # The user reviews what extraction suggested and approves the topic suppression.
    drafts = memory.list_directives(agent, status=DirectiveStatus.DRAFT)
    wanted = next(
        d for d in drafts
        if d.kind is DirectiveKind.SUPPRESS_TOPIC and d.topic == scenario.SUPPRESS_TOPIC
    )  # fmt: skip
    approved = memory.approve_directive(agent, wanted.id)

    runtime = memory.session(agent, scenario.CHAT_SESSION)
    turns = []
    for number, question in enumerate(scenario.QUESTIONS, start=1):
        message_id = f"{scenario.CHAT_SESSION}-{number}"
        tape.append_message(scenario.CHAT_SESSION, "user", question, message_id=message_id)
        turn = await runtime.prepare_turn(message_id, question)
        turns.append(_turn(memory, agent, question, turn))

    forget = await _forget_and_replay(memory, tape, log, clock, conversation)
    identity = await _embedder(memory, clock)
    return DemoResult(
        data_dir="",
        kept=False,
        embedder=identity,
        sessions=tuple(sessions),
        extracted=extracted,
        drafts=tuple(d.content for d in drafts),
        approved=approved.content,
        turns=tuple(turns),
        forget=forget,
        privacy=PrivacyCheck(secrets_shared=0, files_scanned=0, files_with_secret=()),
    )


def _turn(memory: MemoryService, agent: str, question: str, turn: TurnContribution) -> DemoTurn:
    summary = manifest_summary(turn.manifest)
    return DemoTurn(
        message=question,
        memory_text=turn.memory_text,
        directive_text=turn.directive_text,
        manifest=summary,
        names=names_of(memory, agent, summary),
    )


async def _forget_and_replay(
    memory: MemoryService,
    tape: _HostTape,
    log: ExtractLog,
    clock: DemoClock,
    conversation: Sequence[scenario.DemoMessage],
) -> ForgetStep:
    agent = scenario.AGENT_ID
    now = clock.now()
    live = memory.list_claims(agent, limit=_LIMIT)
    target = next(c for c in live if c.content == scenario.FORGET_CONTENT)
    before = await memory.recall(agent, scenario.FORGET_QUERY)
    tombstones = await memory.delete(agent, target.id)
    after = await memory.recall(agent, scenario.FORGET_QUERY)

    # The same conversation again, as a re-import would bring it: its session is new, so
    # everything in it is extracted once more — and the deleted fact is refused.
    clock.set(scenario.SESSION_DATES[scenario.REPLAY_SOURCE])
    for message in conversation:
        if message.session == scenario.REPLAY_SOURCE:
            tape.append_message(scenario.REPLAY_SESSION, message.role, message.content)
    replay = await ingest_session(memory, log, agent, scenario.REPLAY_SESSION)
    clock.set(scenario.CHAT_DATE)
    everything = memory.list_claims(agent, include_inactive=True, limit=_LIMIT)
    return ForgetStep(
        claim=claim_view(target, now),
        tombstones=tombstones,
        query=scenario.FORGET_QUERY,
        recalled_before=tuple(item.claim.content for item in before.items),
        recalled_after=tuple(item.claim.content for item in after.items),
        replay=replay,
        back_after_replay=any(c.content == scenario.FORGET_CONTENT for c in everything),
    )


async def _embedder(memory: MemoryService, clock: DemoClock) -> str:
    if not memory.gateway.embedding_configured:
        return "none (FTS only)"
    identity = await memory.gateway.identity(
        agent_id=scenario.AGENT_ID,
        deadline=Deadline.after(clock, _PROBE_SECONDS),
        cancel=CancellationToken(),
    )
    return f"{identity.provider} {identity.model} ({identity.dim} dims)"


def _scan(root: Path, secrets: Sequence[str]) -> PrivacyCheck:
    """Every file memory wrote, byte for byte, for any secret the user shared."""
    needles = [secret.encode("utf-8") for secret in secrets if secret]
    files = [path for path in sorted(root.rglob("*")) if path.is_file()]
    hits = tuple(
        str(path.relative_to(root))
        for path in files
        if any(needle in path.read_bytes() for needle in needles)
    )
    return PrivacyCheck(
        secrets_shared=len(needles), files_scanned=len(files), files_with_secret=hits
    )
