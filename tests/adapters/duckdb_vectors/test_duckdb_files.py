"""File names and the open decision, read from names alone (R-VEC-1, R-VEC-2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_adapters.duckdb_vectors.files import OpenStep, StoreFiles, file_stem, plan_open
from memory_core.domain.errors import ValidationError


def test_store_files_follow_the_v2_naming_scheme(tmp_path: Path) -> None:
    """R-VEC-1: `<agentId>.v2.duckdb`, its staging, marker and legacy siblings."""
    files = StoreFiles(root=tmp_path, agent_id="agent-7")
    assert files.v2.name == "agent-7.v2.duckdb"
    assert files.v2_wal.name == "agent-7.v2.duckdb.wal"
    assert files.staging.name == "agent-7.v2.duckdb.migrating"
    assert files.marker.name == "agent-7.v2.duckdb.quarantine"
    assert files.v1.name == "agent-7.duckdb"
    assert files.v1_wal.name == "agent-7.duckdb.wal"


@pytest.mark.parametrize(
    ("agent_id", "stem"),
    [
        ("plain_id-1.2", "plain_id-1.2"),
        ("../escape", "%2E.%2Fescape"),
        ("a/b", "a%2Fb"),
        (".hidden", "%2Ehidden"),
        ("..", "%2E."),
        ("ünï", "%C3%BCn%C3%AF"),
        ("100%", "100%25"),
    ],
)
def test_agent_ids_become_safe_file_stems(agent_id: str, stem: str) -> None:
    """R-PRIV-2: no agent id can name a path outside the root or a hidden file."""
    assert file_stem(agent_id) == stem


@given(st.text(min_size=1, max_size=40), st.text(min_size=1, max_size=40))
def test_distinct_agent_ids_never_share_a_stem(first: str, second: str) -> None:
    """R-PRIV-2: the escaping is injective, so agents never share files."""
    if first != second:
        assert file_stem(first) != file_stem(second)
    assert "/" not in file_stem(first)
    assert not file_stem(first).startswith(".")


@pytest.mark.parametrize("bad", ["", "x" * 513])
def test_empty_or_huge_agent_ids_are_rejected(bad: str) -> None:
    """R-STORE-3: every call names a real agent."""
    with pytest.raises(ValidationError):
        file_stem(bad)


@pytest.mark.parametrize(
    ("present", "step"),
    [
        pytest.param((), OpenStep.PUBLISH_FRESH, id="6-nothing"),
        pytest.param(("v2_wal",), OpenStep.PUBLISH_FRESH, id="5-orphan-wal"),
        pytest.param(("v1",), OpenStep.MIGRATE_V1, id="4-v1"),
        pytest.param(("v1", "v1_wal"), OpenStep.DISCARD_V1, id="3-v1-with-wal"),
        pytest.param(("v2", "v2_wal", "v1"), OpenStep.OPEN_V2, id="2-v2-authoritative"),
        pytest.param(("staging", "v1"), OpenStep.MIGRATE_V1, id="1-staging-is-not-a-commit"),
        pytest.param(("staging",), OpenStep.PUBLISH_FRESH, id="1-staging-alone"),
        pytest.param(("marker", "v2", "v1"), OpenStep.RECOVER_QUARANTINE, id="0-marker"),
    ],
)
def test_open_decision_depends_only_on_which_files_exist(
    tmp_path: Path, present: tuple[str, ...], step: OpenStep
) -> None:
    """R-VEC-2: the decision tree of reference §6, from names only (files are empty here,
    so opening any of them would fail)."""
    files = StoreFiles(root=tmp_path, agent_id="a")
    for name in present:
        getattr(files, name).touch()
    assert plan_open(files) is step
