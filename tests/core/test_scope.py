"""Scope values and the narrowing filter (R-SCOPE-1, R-SCOPE-2)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_core.domain.errors import ScopeError, ValidationError
from memory_core.domain.scope import (
    MAX_SCOPE_ID_LENGTH,
    Scope,
    ScopeContext,
    ScopeFilter,
    ScopeKind,
    validate_agent_id,
)

NARROW = (ScopeKind.USER, ScopeKind.PROJECT, ScopeKind.SESSION)


def test_agent_scope_has_no_id() -> None:
    """R-SCOPE-1: Agent scope is the owner-wide default and carries no id."""
    scope = Scope.agent()
    assert scope.kind is ScopeKind.AGENT
    assert scope.scope_id is None
    assert scope.is_agent
    assert str(scope) == "agent"


def test_agent_scope_with_an_id_is_rejected() -> None:
    """R-SCOPE-1: an Agent scope that carries an id is an invalid pair."""
    with pytest.raises(ScopeError) as caught:
        Scope(kind=ScopeKind.AGENT, scope_id="s1")
    assert caught.value.field == "scope.scope_id"


@pytest.mark.parametrize("kind", NARROW)
def test_narrow_scope_requires_an_id(kind: ScopeKind) -> None:
    """R-SCOPE-1: user/project/session scopes need exactly one id."""
    for missing in (None, ""):
        with pytest.raises(ScopeError) as caught:
            Scope(kind=kind, scope_id=missing)
        assert caught.value.field == "scope.scope_id"


@pytest.mark.parametrize("bad", ["   ", " s1", "s1 ", "\ts1", "s1\n"])
def test_blank_or_padded_scope_ids_are_rejected(bad: str) -> None:
    """R-SCOPE-1: a padded id would never match its unpadded twin, so it is refused."""
    with pytest.raises(ScopeError) as caught:
        Scope.session(bad)
    assert caught.value.field == "scope.scope_id"


def test_scope_id_length_is_bounded() -> None:
    """R-SCOPE-1: scope ids are at most 256 characters."""
    assert Scope.project("p" * MAX_SCOPE_ID_LENGTH).scope_id == "p" * 256
    with pytest.raises(ScopeError):
        Scope.project("p" * (MAX_SCOPE_ID_LENGTH + 1))


def test_scope_kind_is_converted_from_its_value() -> None:
    """R-SCOPE-1: kinds arrive as strings from storage and JSON."""
    scope = Scope(kind="session", scope_id="s1")  # type: ignore[arg-type]
    assert scope == Scope.session("s1")
    assert str(scope) == "session:s1"


def test_unknown_scope_kind_is_a_scope_error_naming_the_field() -> None:
    """R-SCOPE-1, R-DOM-4: only agent/user/project/session exist; the value is not echoed."""
    with pytest.raises(ScopeError) as caught:
        Scope(kind="team", scope_id="t1")  # type: ignore[arg-type]
    assert caught.value.field == "scope.kind"
    assert "team" not in str(caught.value)


def test_scopes_are_values() -> None:
    """R-SCOPE-3: equal pairs are equal and hashable; different ids are different scopes."""
    assert Scope.session("s1") == Scope.session("s1")
    assert len({Scope.session("s1"), Scope.session("s1"), Scope.session("s2")}) == 2
    assert Scope.user("x") != Scope.project("x")


def test_legacy_user_shadow_is_set_only_for_user_scope() -> None:
    """R-SCOPE-2: the legacy `user_scope` column mirrors only User-scope ids."""
    assert Scope.user("u1").legacy_user_shadow == "u1"
    assert Scope.agent().legacy_user_shadow is None
    assert Scope.project("p1").legacy_user_shadow is None
    assert Scope.session("s1").legacy_user_shadow is None


def test_filter_without_context_sees_agent_scope_only() -> None:
    """R-SCOPE-1: missing narrow context never widens: only Agent scope is visible."""
    for context in (None, ScopeContext()):
        scope_filter = ScopeFilter.from_context(context)
        assert scope_filter.scopes == (Scope.agent(),)
        assert scope_filter == ScopeFilter.agent_only()
        assert not scope_filter.admits(Scope.session("s1"))


def test_filter_admits_the_session_named_by_the_context_and_no_other() -> None:
    """R-SCOPE-1: a session-scoped claim is recalled only when its session id is given."""
    scope_filter = ScopeFilter.from_context(ScopeContext(session_id="s1"))
    assert scope_filter.admits(Scope.agent())
    assert scope_filter.admits(Scope.session("s1"))
    assert not scope_filter.admits(Scope.session("s2"))
    assert not scope_filter.admits(Scope.user("s1"))
    assert not scope_filter.admits(Scope.project("s1"))


def test_filter_with_every_id_admits_exactly_those_scopes() -> None:
    """R-SCOPE-1: each supplied id adds exactly its own scope."""
    scope_filter = ScopeFilter.from_context(
        ScopeContext(session_id="s1", user_id="u1", project_id="p1")
    )
    assert set(scope_filter.scopes) == {
        Scope.agent(),
        Scope.user("u1"),
        Scope.project("p1"),
        Scope.session("s1"),
    }


@pytest.mark.parametrize("blank", ["", " ", "\t\n"])
def test_blank_context_ids_are_ignored(blank: str) -> None:
    """R-SCOPE-1: a blank id counts as missing and must not widen what is visible."""
    scope_filter = ScopeFilter.from_context(
        ScopeContext(session_id=blank, user_id=blank, project_id=blank)
    )
    assert scope_filter.scopes == (Scope.agent(),)


ids = st.one_of(st.none(), st.text(max_size=12))


@given(ids, ids, ids)
def test_filter_never_admits_a_scope_the_context_did_not_name(
    session_id: str | None, user_id: str | None, project_id: str | None
) -> None:
    """R-SCOPE-1: every admitted narrow scope is one whose id the context supplied."""
    context = ScopeContext(session_id=session_id, user_id=user_id, project_id=project_id)
    supplied = {
        ScopeKind.SESSION: session_id,
        ScopeKind.USER: user_id,
        ScopeKind.PROJECT: project_id,
    }
    scope_filter = ScopeFilter.from_context(context)
    assert scope_filter.scopes[0] == Scope.agent()
    for scope in scope_filter.scopes[1:]:
        named = supplied[scope.kind]
        assert named is not None
        assert scope.scope_id == named.strip()
        assert scope.scope_id
    assert len({scope.kind for scope in scope_filter.scopes}) == len(scope_filter.scopes)


@pytest.mark.parametrize("good", ["a", "agent-1", "Agent_2", "x" * 128, "0-_Z"])
def test_valid_agent_ids_are_returned(good: str) -> None:
    """R-SCOPE-1: agent ids match [A-Za-z0-9_-]{1,128}."""
    assert validate_agent_id(good) == good


@pytest.mark.parametrize(
    "bad", ["", "x" * 129, "a b", "a/b", "../a", "a.b", "agent\n", "ä", None, 7]
)
def test_invalid_agent_ids_are_rejected_naming_the_field(bad: object) -> None:
    """R-SCOPE-1: the owner id must be safe as a file name and in SQL."""
    with pytest.raises(ValidationError) as caught:
        validate_agent_id(bad)
    assert caught.value.field == "agent_id"
    with pytest.raises(ValidationError) as renamed:
        validate_agent_id(bad, field="claim.agent_id")
    assert renamed.value.field == "claim.agent_id"
