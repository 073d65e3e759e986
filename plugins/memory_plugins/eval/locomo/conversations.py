"""One LoCoMo sample stored as one agent: every turn a verbatim episodic claim, recorded at its
session's date."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import attrs

from memory_core.domain.claims import ClaimDraft, ClaimKind, ClaimSource
from memory_core.domain.errors import ValidationError
from memory_plugins.eval.harness import SEED_AGE, EvalMemory
from memory_plugins.eval.locomo_format import LocomoSample, LocomoTurn, session_dates, sessions_of

__all__ = ["StoredConversation", "session_of", "store_conversation"]


@attrs.frozen(kw_only=True)
class StoredConversation:
    agent_id: str
    index: int
    dia_claims: dict[str, str]  # dia id -> claim id
    contents: dict[str, str]  # claim id -> content (token counts only; never reported)
    sessions: dict[str, str]  # claim id -> session ("D3")


def session_of(dia_id: str) -> str:
    return dia_id.split(":", maxsplit=1)[0]


def _session_number(dia_id: str) -> int | None:
    digits = session_of(dia_id)[1:]
    return int(digits) if digits.isdigit() else None


async def store_conversation(
    memory: EvalMemory, sample: LocomoSample, index: int, path: Path
) -> StoredConversation:
    agent_id = f"locomo-{index:03d}"
    dates = session_dates(sample)
    seeded = memory.clock.now() - SEED_AGE
    by_time: dict[datetime, list[tuple[LocomoTurn, ClaimDraft]]] = {}
    for session in sessions_of(sample, path=path, index=index):
        for turn in session:
            content = f"{turn.speaker}: {turn.text}"
            try:
                draft = ClaimDraft(
                    agent_id=agent_id,
                    kind=ClaimKind.EPISODIC,
                    content=content,
                    source=ClaimSource(session_id=session_of(turn.dia_id), extractor="locomo"),
                )
            except ValidationError:
                continue  # an empty turn: nothing to remember
            recorded = dates.get(_session_number(turn.dia_id) or 0, seeded)
            by_time.setdefault(min(recorded, seeded), []).append((turn, draft))
    dia_claims: dict[str, str] = {}
    contents: dict[str, str] = {}
    sessions: dict[str, str] = {}
    for recorded_at, drafts in sorted(by_time.items()):
        outcomes = await memory.service.import_claims(
            agent_id, [draft for _, draft in drafts], recorded_at=recorded_at
        )
        for (turn, draft), outcome in zip(drafts, outcomes, strict=True):
            if outcome.claim is not None:
                dia_claims[turn.dia_id] = outcome.claim.id
                contents[outcome.claim.id] = draft.content
                sessions[outcome.claim.id] = session_of(turn.dia_id)
    await memory.service.warm(agent_id)
    return StoredConversation(
        agent_id=agent_id,
        index=index,
        dia_claims=dia_claims,
        contents=contents,
        sessions=sessions,
    )
