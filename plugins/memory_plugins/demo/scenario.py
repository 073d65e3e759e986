"""The demo's story: who talks when, what is asked afterwards, and what gets forgotten.

The conversation itself is `tape.jsonl` (docs/tape-format.md). Ana lives in Paris, works at
Acme Robotics, plans a trip to Lisbon and pastes an API key (session 1); moves to Berlin,
cancels the trip and mentions her divorce (session 2); asks the assistant to stop
mentioning the divorce and shares two more facts (session 3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from importlib import resources
from zoneinfo import ZoneInfo

import attrs

from memory_core.domain.serialization import structure

__all__ = [
    "AGENT_ID",
    "CHAT_DATE",
    "CHAT_SESSION",
    "FORGET_CONTENT",
    "FORGET_QUERY",
    "QUESTIONS",
    "REPLAY_SESSION",
    "REPLAY_SOURCE",
    "SESSION_DATES",
    "SUPPRESS_TOPIC",
    "TIMEZONE",
    "DemoMessage",
    "load_conversation",
]

TIMEZONE = "Europe/Berlin"
_ZONE = ZoneInfo(TIMEZONE)
AGENT_ID = "demo"

# Business time of each session: "last month" in session 2 means April 2026.
SESSION_DATES: Mapping[str, datetime] = {
    "s1-paris": datetime(2026, 3, 2, 9, 30, tzinfo=_ZONE),
    "s2-berlin": datetime(2026, 5, 18, 19, 0, tzinfo=_ZONE),
    "s3-settling-in": datetime(2026, 6, 8, 18, 0, tzinfo=_ZONE),
}

# The turns the demo answers after ingestion, in a new session two days later.
CHAT_SESSION = "demo-chat"
CHAT_DATE = datetime(2026, 6, 10, 10, 0, tzinfo=_ZONE)
QUESTIONS: Sequence[str] = (
    "Where do I live these days, and where do I work?",
    "Should I book flights for my Lisbon trip?",
    "Plan a relaxing weekend for me.",
)

SUPPRESS_TOPIC = "divorce"  # the draft directive the demo approves as the user
FORGET_CONTENT = "The user works at Acme Robotics."  # the claim the user deletes
FORGET_QUERY = "Where do I work?"
REPLAY_SOURCE = "s1-paris"  # replayed after the delete: the fact must stay gone
REPLAY_SESSION = "s1-paris-replay"


@attrs.frozen(kw_only=True)
class DemoMessage:
    """One message line of `tape.jsonl`."""

    id: str
    session: str
    order_seq: int
    role: str
    content: str
    status: str = "sent"
    kind: str = "message"


def load_conversation() -> tuple[DemoMessage, ...]:
    """The bundled conversation, in file order."""
    text = resources.files(__package__).joinpath("tape.jsonl").read_text(encoding="utf-8")
    return tuple(
        structure(json.loads(line), DemoMessage) for line in text.splitlines() if line.strip()
    )
