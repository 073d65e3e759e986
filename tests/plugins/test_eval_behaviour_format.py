"""The behaviour-fixture boundary: one converter, readable errors, DeepChat's validator.

R-BEYOND-2 (the evaluation command reads DeepChat's format), R-DOM-4 (errors name the field).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_plugins.eval.behaviour_format import load_behaviour_fixture
from memory_plugins.eval.fixture_io import FixtureError


def _scenario(axis: str, **extra: Any) -> dict[str, Any]:
    scenario: dict[str, Any] = {
        "id": f"{axis}-scenario",
        "axis": axis,
        "mode": "recall",
        "query": "q",
        "rows": [{"id": "r1", "kind": "semantic", "content": "Project Atlas uses pnpm."}],
        "expected": {"selectedMemoryIds": ["r1"]},
    }
    scenario.update(extra)
    return scenario


def _fixture(**changes: Any) -> dict[str, Any]:
    scenarios = [
        _scenario("carry_forward"),
        _scenario(
            "preference_directive",
            directives=[{"kind": "instruction", "content": "Be brief.", "state": "active"}],
        ),
        _scenario("temporal"),
        _scenario("correction_forgetting", deleteIds=["r1"]),
    ]
    document: dict[str, Any] = {"version": 1, "clock": {"now": 2_000_000}, "scenarios": scenarios}
    document.update(changes)
    return document


def _write(tmp_path: Path, document: object) -> Path:
    path = tmp_path / "fixture.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_valid_fixture_loads_with_camel_case_keys(tmp_path: Path) -> None:
    """R-BEYOND-2: DeepChat's camelCase keys map onto the fixture values."""
    fixture = load_behaviour_fixture(_write(tmp_path, _fixture()))

    assert fixture.clock.time_zone == "UTC"
    assert fixture.scenarios[3].delete_ids == ("r1",)
    assert fixture.scenarios[0].expected.selected_memory_ids == ("r1",)


def _problem(tmp_path: Path, document: object) -> str:
    with pytest.raises(FixtureError) as caught:
        load_behaviour_fixture(_write(tmp_path, document))
    return str(caught.value)


def test_an_unknown_key_is_refused_with_its_camel_case_path(tmp_path: Path) -> None:
    """R-DOM-4: a misspelt expectation key is an error naming the file and key path."""
    document = _fixture()
    document["scenarios"][2]["expected"]["excludedMemoryIDs"] = ["r1"]

    message = _problem(tmp_path, document)

    assert "fixture.json" in message
    assert "$.scenarios[2].expected" in message
    assert "excludedMemoryIDs" in message


def test_a_wrongly_typed_value_names_its_path(tmp_path: Path) -> None:
    """R-DOM-4: "0.9" is not an importance; the error names the camelCase path."""
    document = _fixture()
    document["scenarios"][0]["rows"][0]["importance"] = "0.9"
    document["scenarios"][1]["deleteIds"] = "r1"

    message = _problem(tmp_path, document)

    assert "$.scenarios[0].rows[0].importance: must be a number" in message
    assert "$.scenarios[1].deleteIds: must be a list" in message


@pytest.mark.parametrize(
    ("mutate", "expected"),
    [
        (lambda d: d["scenarios"][1].update(id="carry_forward-scenario"), "is used 2 times"),
        (lambda d: d["scenarios"][0].update(axis="vibes"), "unknown axis 'vibes'"),
        (lambda d: d["scenarios"][0].update(mode="batch"), "unknown mode 'batch'"),
        (lambda d: d["scenarios"][3].update(deleteIds=["r9"]), "deleteIds names 'r9'"),
        (lambda d: d["scenarios"].pop(2), "axes without a scenario: temporal"),
        (
            lambda d: d["scenarios"][1].pop("directives"),
            "no preference_directive scenario has directives",
        ),
        (
            lambda d: d["scenarios"][0]["expected"].update(excludedMemoryIds=["ghost"]),
            "expected.excludedMemoryIds names 'ghost'",
        ),
        (
            lambda d: d["scenarios"][0]["rows"][0].update(kind="working"),
            "kind 'working' cannot be stored",
        ),
        (lambda d: d.update(version=2), "version 2 is not supported"),
    ],
)
def test_the_validator_names_each_problem(tmp_path: Path, mutate: Any, expected: str) -> None:
    """R-BEYOND-2: DeepChat's validator rules (unique ids, known axes and modes, deletes of
    existing rows, a directive scenario, all four axes) plus typo checks on expectations."""
    document = _fixture()
    mutate(document)

    assert expected in _problem(tmp_path, document)


def test_a_missing_or_broken_file_is_a_readable_error(tmp_path: Path) -> None:
    """R-BEYOND-2: unreadable input is a FixtureError naming the path, never a traceback."""
    with pytest.raises(FixtureError, match="cannot read"):
        load_behaviour_fixture(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(FixtureError, match="not valid JSON"):
        load_behaviour_fixture(broken)
