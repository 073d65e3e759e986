"""The LoCoMo file format, read leniently: only what evidence retrieval needs.

Format (Maharana et al., ACL 2024): a list of samples, each with `conversation.session_N`
(turns: `speaker`, `dia_id` "D<session>:<turn>", `text`), `conversation.session_N_date_time`,
and `qa` (question, evidence dia ids, category 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial). Other keys (answers, captions, summaries, image fields) are
ignored; keys are snake_case as in the file.
"""

from __future__ import annotations

import re
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
    "load_locomo",
    "sessions_of",
]

_SESSION = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D\d+:\d+")


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
