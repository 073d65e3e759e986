"""The conflict rules (reference §7.8, `memory_core.storage.conflicts`): what each
resolution moves, and what a removal of a target or a challenger does to the others."""

from __future__ import annotations

import pytest

from memory_core.ports.claims import Resolution
from memory_core.storage.conflicts import LinkChange, Removal, removal_change, resolution_change


@pytest.mark.parametrize(
    ("resolution", "standing", "expected"),
    [
        (
            Resolution.KEEP_TARGET,
            "t",
            LinkChange(archive=(("c1", "t"),), edges=(("c1", "t"),), unlink=("c1",)),
        ),
        (
            Resolution.KEEP_CHALLENGER,
            "c1",
            LinkChange(
                activate=("c1",),
                supersede=(("t", "c1"),),
                archive=(("c2", "c1"),),
                edges=(("t", "c1"), ("c2", "c1")),
                unlink=("c1", "c2"),
                clear_flag="t",
            ),
        ),
        (Resolution.KEEP_BOTH, "c1", LinkChange(activate=("c1",), unlink=("c1",))),
    ],
)
def test_each_resolution_moves_the_rows_of_its_challenge(
    resolution: Resolution, standing: str, expected: LinkChange
) -> None:
    """With a sibling challenger left, only keep_challenger clears the target's flag."""
    assert resolution_change(resolution, "c1", "t", ["c1", "c2"]) == (standing, expected)


@pytest.mark.parametrize("resolution", [Resolution.KEEP_TARGET, Resolution.KEEP_BOTH])
def test_the_last_challenger_resolved_clears_the_flag(resolution: Resolution) -> None:
    _, change = resolution_change(resolution, "c1", "t", ["c1"])
    assert change.clear_flag == "t"


@pytest.mark.parametrize(("how", "flag"), [(Removal.DELETE, None), (Removal.RETIRE, "t")])
def test_a_removed_target_parks_its_challengers_and_promotes_none(
    how: Removal, flag: str | None
) -> None:
    """A user delete of a fact must not make its rival live: the challengers are archived
    with no successor, unlinked; a retired (still stored) target loses its flag."""
    change = removal_change("t", how, challengers=["c1", "c2"], target=None, siblings=())
    assert change == LinkChange(
        archive=(("c1", None), ("c2", None)), unlink=("c1", "c2"), clear_flag=flag
    )
    assert change.activate == ()


@pytest.mark.parametrize(("siblings", "flag"), [(["c1"], "t"), (["c1", "c2"], None)])
def test_a_removed_challenger_unlinks_and_clears_the_flag_when_last(
    siblings: list[str], flag: str | None
) -> None:
    change = removal_change("c1", Removal.DELETE, challengers=(), target="t", siblings=siblings)
    assert change == LinkChange(unlink=("c1",), clear_flag=flag)


def test_a_row_outside_any_challenge_changes_nothing() -> None:
    assert removal_change("x", Removal.DELETE, challengers=(), target=None, siblings=()).empty
