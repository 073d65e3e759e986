"""The LoCoMo file format, read leniently: only what evidence retrieval needs.

Format (Maharana et al., ACL 2024): a list of samples, each with `conversation.session_N`
(turns: `speaker`, `dia_id` "D<session>:<turn>", `text`), `conversation.session_N_date_time`,
and `qa` (question, evidence dia ids, category 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial). Other keys (answers, captions, summaries, image fields) are
ignored; keys are snake_case as in the file.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs

from memory_plugins.eval.fixture_io import (
    FixtureError,
    fixture_converter,
    load_json,
    structure_fixture,
)

__all__ = [
    "LocomoQuestion",
    "LocomoSample",
    "LocomoTurn",
    "evidence_ids",
    "load_exclude",
    "load_locomo",
    "question_key",
    "session_dates",
    "sessions_of",
]

_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\d+:\d+")
# "1:56 pm on 8 May, 2023": the only shape the LoCoMo files use for session dates.
_SESSION_DATE = re.compile(
    r"(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>am|pm)\s+on\s+"
    r"(?P<day>\d{1,2})\s+(?P<month>[A-Za-z]+),?\s+(?P<year>\d{4})",
    re.IGNORECASE,
)


@attrs.frozen(kw_only=True)
class LocomoTurn:
    speaker: str
    dia_id: str
    text: str


@attrs.frozen(kw_only=True)
class LocomoQuestion:
    question: str
    category: int
    evidence: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class LocomoSample:
    conversation: dict[str, Any]
    qa: tuple[LocomoQuestion, ...] = ()
    sample_id: str | None = None


# LoCoMo files carry many keys this evaluation does not read: extra keys are allowed.
_CONVERTER = fixture_converter(forbid_extra_keys=False, camel_case=False)


def load_locomo(path: Path) -> list[LocomoSample]:
    data = load_json(path)
    if not isinstance(data, list) or not data:
        raise FixtureError(f"{path}: a LoCoMo file is a non-empty list of samples")
    samples = structure_fixture(data, list[LocomoSample], path=path, converter=_CONVERTER)
    for index, sample in enumerate(samples):
        if not sessions_of(sample, path=path, index=index):
            raise FixtureError(f"{path}: $[{index}].conversation has no session_N turns")
    return samples


def sessions_of(sample: LocomoSample, *, path: Path, index: int) -> list[list[LocomoTurn]]:
    """The sample's sessions in numeric order, each a list of turns."""
    numbered = sorted(
        (int(match.group(1)), key)
        for key in sample.conversation
        if (match := _SESSION.fullmatch(key))
    )
    sessions: list[list[LocomoTurn]] = []
    for _, key in numbered:
        sessions.append(
            list(
                structure_fixture(
                    sample.conversation[key],
                    tuple[LocomoTurn, ...],
                    path=path,
                    converter=_CONVERTER,
                    root=f"$[{index}].conversation.{key}",
                )
            )
        )
    return sessions


def evidence_ids(question: LocomoQuestion) -> list[str]:
    """The dia ids a question cites."""
    # Some gold entries pack several ids into one string ("D8:6; D9:17").
    return [found for entry in question.evidence for found in _DIA_ID.findall(entry)]


def session_dates(sample: LocomoSample) -> dict[int, datetime]:
    """Session number -> its start as a UTC instant, for sessions whose date parses.

    The files give no zone; UTC is as good as any, since only the day is ever compared."""
    dates: dict[int, datetime] = {}
    for key, value in sample.conversation.items():
        match = re.fullmatch(r"session_(\d+)_date_time", key)
        found = _SESSION_DATE.search(value) if match and isinstance(value, str) else None
        if match is None or found is None:
            continue
        hour = int(found.group("hour")) % 12 + (12 if found.group("half").lower() == "pm" else 0)
        try:
            month = datetime.strptime(found.group("month")[:3], "%b").month
            dates[int(match.group(1))] = datetime(
                int(found.group("year")),
                month,
                int(found.group("day")),
                hour,
                int(found.group("minute")),
                tzinfo=UTC,
            )
        except ValueError:
            continue  # an unreadable date: the session keeps the evaluation's seed time
    return dates


def question_key(sample: LocomoSample, index: int, question: int) -> str:
    """`<sample id>:<question index>` (the sample's position when it has no id): how
    `--exclude` files name a question."""
    return f"{sample.sample_id or index}:{question}"


_QUESTION_KEY = re.compile(r"[^\s:#]+:\d+")


def load_exclude(path: Path) -> frozenset[str]:
    """Question ids to skip, one `<sample id>:<question index>` per line; `#` starts a
    comment. A line of any other shape is a FixtureError naming its line number."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise FixtureError(f"{path}: cannot read the exclude file ({type(exc).__name__})") from exc
    keys: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        if not _QUESTION_KEY.fullmatch(entry):
            raise FixtureError(
                f"{path}:{number}: expected <sample id>:<question index>, e.g. conv-26:12"
            )
        keys.add(entry)
    return frozenset(keys)
