"""The tool schemas and their one validator (`memory_plugins.tool_schemas`).

Every keyword a schema uses is one the validator enforces (a test fails otherwise, with a
planted misspelt keyword proving it can); the strict-mode form is what strict clients
accept; `null` for an optional field is "not given".
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema
from jsonschema import Draft202012Validator

from memory_plugins.tool_schemas import (
    CONTEXT_PROPERTIES,
    STRICT_KEYWORDS,
    TOOL_DEFINITIONS,
    USER_TOOL_DEFINITIONS,
    argument_problem,
    schema_of,
    strict_definition,
    with_context,
)

# Keywords that only annotate: nothing to enforce.
ANNOTATIONS = frozenset({"description", "title"})
# What the validator checks: every Draft 2020-12 assertion jsonschema implements ("format"
# included, as the validator is built with a format checker).
CHECKED = frozenset(Draft202012Validator.VALIDATORS)
_SUBSCHEMA_MAPS = ("properties", "patternProperties", "$defs", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMAS = ("items", "not", "if", "then", "else", "contains", "additionalProperties")


def keywords(schema: Mapping[str, Any]) -> Iterator[str]:
    """Every keyword used in `schema` and its subschemas (property names are not keywords)."""
    for keyword, value in schema.items():
        yield keyword
        if keyword in _SUBSCHEMA_MAPS:
            for sub in value.values():
                yield from keywords(sub)
        elif keyword in _SUBSCHEMA_LISTS:
            for sub in value:
                yield from keywords(sub)
        elif keyword in _SUBSCHEMAS and isinstance(value, Mapping):
            yield from keywords(value)


def unchecked(schema: Mapping[str, Any]) -> set[str]:
    return set(keywords(schema)) - CHECKED - ANNOTATIONS


ALL_DEFINITIONS = [
    *TOOL_DEFINITIONS,
    *USER_TOOL_DEFINITIONS,
    *(with_context(d, CONTEXT_PROPERTIES) for d in TOOL_DEFINITIONS),
    *(strict_definition(d) for d in TOOL_DEFINITIONS),
]


@pytest.mark.parametrize(
    "definition", ALL_DEFINITIONS, ids=lambda d: d["function"]["name"] + str(len(str(d)))
)
def test_every_keyword_a_schema_uses_is_one_the_validator_checks(
    definition: dict[str, Any],
) -> None:
    schema = definition["function"]["parameters"]

    Draft202012Validator.check_schema(schema)
    assert unchecked(schema) == set()


@pytest.mark.parametrize(
    ("planted", "found"),
    [
        ({"minLenght": 1}, {"minLenght"}),  # a typo the library would silently ignore
        ({"x-internal": True}, {"x-internal"}),
        ({"anyOf": [{"type": "string", "maxChars": 3}]}, {"maxChars"}),
    ],
)
def test_a_keyword_the_validator_does_not_check_is_reported(
    planted: dict[str, Any], found: set[str]
) -> None:
    schema = copy.deepcopy(schema_of("memory_remember"))
    schema["properties"]["content"].update(planted)

    assert unchecked(schema) == found


@pytest.mark.parametrize(
    ("schema_name", "arguments", "message"),
    [
        ("memory_remember", {}, "content: required"),
        ("memory_remember", {"content": ""}, "content: must not be empty"),
        ("memory_remember", {"content": "x" * 2001}, "content: at most 2000 characters"),
        ("memory_remember", {"content": "a", "user_add": True}, "user_add: unknown argument"),
        ("memory_recall", {"query": "q", "top_k": 21}, "top_k: must be in 1..20"),
        ("memory_recall", {"query": "q", "top_k": 2.5}, "top_k: must be an integer or null"),
        ("user_memory_delete", {"memory_id": 7}, "memory_id: must be a string"),
        ("user_memory_delete", {"memory_id": "m" * 201}, "memory_id: at most 200 characters"),
    ],
)
def test_the_validator_names_the_field_and_the_rule(
    schema_name: str, arguments: dict[str, Any], message: str
) -> None:
    problem = argument_problem(schema_of(schema_name), arguments)

    assert problem is not None and problem.startswith(message)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ({"enum": ["a", "b"]}, "code: breaks the schema's 'enum' rule"),
        ({"minLength": 40}, "code: at least 40 characters"),
        ({"pattern": "^[a-z]+$"}, "code: breaks the schema's 'pattern' rule"),
    ],
)
def test_a_refusal_never_echoes_the_value(rule: dict[str, Any], message: str) -> None:
    """R-PROV-5: jsonschema's own text quotes the value, which may be a secret."""
    schema = {"type": "object", "properties": {"code": {"type": "string", **rule}}}

    assert argument_problem(schema, {"code": "sk-secret-value"}) == message


@pytest.mark.parametrize(
    "arguments", [{"query": "tea"}, {"query": "tea", "top_k": None}, {"query": "tea", "top_k": 3}]
)
def test_null_and_absent_are_both_accepted_for_an_optional_field(
    arguments: dict[str, Any],
) -> None:
    assert argument_problem(schema_of("memory_recall"), arguments) is None


@pytest.mark.parametrize("definition", TOOL_DEFINITIONS, ids=lambda d: d["function"]["name"])
def test_the_strict_form_is_what_a_strict_client_accepts(definition: dict[str, Any]) -> None:
    """Every property required, closed objects, only documented keywords; the Agents SDK's
    own strict-schema check leaves it as it is."""
    strict = strict_definition(definition)
    function = strict["function"]
    parameters = function["parameters"]

    assert function["strict"] is True
    assert parameters["required"] == list(parameters["properties"])
    assert parameters["additionalProperties"] is False
    assert set(keywords(parameters)) <= STRICT_KEYWORDS
    assert ensure_strict_json_schema(copy.deepcopy(parameters)) == parameters
    # A strict client sends every field; what it sends passes the base schema.
    sent = {key: None if "null" in prop["type"] else "x" for key, prop in
            parameters["properties"].items()}  # fmt: skip
    assert argument_problem(schema_of(function["name"]), sent) is None
    assert "strict" not in definition["function"]  # the base definition is untouched


def test_with_context_requires_the_agent_and_leaves_the_rest_nullable() -> None:
    definition = with_context(TOOL_DEFINITIONS[1], ["agent_id", "session_id", "user_id"])
    schema = definition["function"]["parameters"]

    assert schema["required"] == ["query", "agent_id"]
    assert argument_problem(schema, {"query": "q"}) == "agent_id: required"
    assert argument_problem(schema, {"query": "q", "agent_id": "a", "user_id": None}) is None
    assert "agent_id" not in schema_of("memory_recall")["properties"]  # a copy
