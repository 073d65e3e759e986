"""The ingestion benchmark's messages from a conversation file (issue 15): a plain list of
turns or a LoCoMo-style file, turn after turn from the seed, each text as said and distinct."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.ingestion import conversation

LOCOMO_STYLE = [
    {
        "conversation": {
            "speaker_a": "A",
            "session_1_date_time": "1 May 2023",
            "session_1": [{"speaker": "A", "text": "I adopted a cat."}, {"text": " "}],
            "session_2": [{"speaker": "B", "text": "Nice! What is its name?"}],
        }
    }
]


@pytest.mark.parametrize(
    "data", [LOCOMO_STYLE, LOCOMO_STYLE[0], ["I adopted a cat.", "Nice! What is its name?"]]
)
def test_the_turns_come_in_order_round_and_round(data: object, tmp_path: Path) -> None:
    path = tmp_path / "conversation.json"
    path.write_text(json.dumps(data))
    assert conversation(path, 5, seed=1) == [
        "Nice! What is its name?",
        "I adopted a cat.",
        "Nice! What is its name? (again 1)",
        "I adopted a cat. (again 1)",
        "Nice! What is its name? (again 2)",
    ]


def test_a_file_without_turns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.json"
    path.write_text(json.dumps([{"conversation": {"session_1": [{"text": ""}]}}]))
    with pytest.raises(ValueError, match="no turns"):
        conversation(path, 3)
