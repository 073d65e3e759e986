"""The insert decision once in the core (R-WRITE-4, R-WRITE-5): a duplicate key first and
without a tombstone probe; a tombstone suppresses every origin except the user's explicit
add, which releases it."""

from __future__ import annotations

import pytest

from memory_core.domain.claims import WriteOrigin
from memory_core.storage.admission import Admission, admit, tombstone_verdict


def _never() -> bool:
    raise AssertionError("a duplicate must not probe tombstones")


def test_a_duplicate_key_is_answered_without_probing_tombstones() -> None:
    assert (
        admit(duplicate=True, tombstoned=_never, origin=WriteOrigin.USER_ADD) is Admission.DUPLICATE
    )


@pytest.mark.parametrize("origin", list(WriteOrigin))
def test_an_untombstoned_new_key_is_admitted_from_every_origin(origin: WriteOrigin) -> None:
    decision = admit(duplicate=False, tombstoned=lambda: False, origin=origin)
    assert decision is Admission.ADMITTED and decision.writes


@pytest.mark.parametrize(
    ("origin", "expected"),
    [
        (WriteOrigin.USER_ADD, Admission.RELEASED),
        (WriteOrigin.MODEL_TOOL, Admission.SUPPRESSED),
        (WriteOrigin.EXTRACTION, Admission.SUPPRESSED),
        (WriteOrigin.IMPORT, Admission.SUPPRESSED),
    ],
)
def test_a_tombstone_yields_only_to_the_users_explicit_add(
    origin: WriteOrigin, expected: Admission
) -> None:
    """R-WRITE-4 (suppressed replay), R-WRITE-5 (explicit re-add releases)."""
    assert admit(duplicate=False, tombstoned=lambda: True, origin=origin) is expected
    assert tombstone_verdict(tombstoned=True, origin=origin) is expected
    assert expected.writes is (expected is Admission.RELEASED)


def test_origin_given_as_its_value_is_read_as_the_enum() -> None:
    assert tombstone_verdict(tombstoned=True, origin="user_add") is Admission.RELEASED  # type: ignore[arg-type]
