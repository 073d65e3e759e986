"""The memory tools' JSON schemas and the one validator their arguments pass through.

Two families, kept apart by name so nobody confuses them:

- the model's tools (`memory_remember`, `memory_recall`, `memory_forget`), which any host may
  hand a model: they never release a tombstone, never delete, never touch directives;
- the user-level tools (`user_memory_add`, `user_memory_delete`), which an operator may expose
  on purpose (`agent-memory mcp --allow-user-tools`): an explicit user add, which can bring
  back forgotten text (R-WRITE-5), and the irrecoverable delete (R-FORGET-1).

Optional fields are nullable (`"type": ["integer", "null"]`): a client in OpenAI's strict
mode must send every property and sends `null` for "not given". `strict_definition` makes
the strict form of a definition (every property required, only the keywords strict mode
documents); the base schema stays the one arguments are checked against, so what either
form lets through is checked the same way.

The validator is the `jsonschema` library (Draft 2020-12), not a hand-written subset: a
keyword added to a schema is enforced the moment it is written. Its messages are rewritten
into ours, which name the field and the rule and never repeat the value (a refused value
may be a secret, R-PROV-5).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as SchemaError
from jsonschema.exceptions import best_match

__all__ = [
    "CONTEXT_PROPERTIES",
    "MODEL_TOOL_NAMES",
    "STRICT_KEYWORDS",
    "TOOL_DEFINITIONS",
    "TOOL_NAMES",
    "USER_TOOL_DEFINITIONS",
    "USER_TOOL_NAMES",
    "argument_problem",
    "schema_of",
    "strict_definition",
    "with_context",
]

MAX_CONTENT = 2_000
MAX_QUERY = 2_000
MAX_TOP_K = 20
MAX_ID = 200

# The keywords OpenAI's structured-outputs strict mode documents; a strict definition keeps
# only these, so a strict client never rejects a tool for a keyword it does not know. The
# dropped ones (minLength, maxLength) are still enforced here, on the base schema.
STRICT_KEYWORDS = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "description", "enum",
        "anyOf", "items", "minimum", "maximum", "pattern", "format",
    }
)  # fmt: skip


def _function(
    name: str, description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


def _text(max_length: int, description: str) -> dict[str, Any]:
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": max_length,
        "description": description,
    }


_MEMORY_ID = _text(MAX_ID, "The id memory_recall returned for the memory.")

TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    _function(
        "memory_remember",
        "Save one durable fact about the user or their work (a preference, a plan, a "
        "decision) to long-term memory, as a short third-person sentence such as 'The user "
        "prefers tea.'. Credentials (passwords, API keys, tokens) are always refused. Text "
        "the user asked to forget cannot be saved again by you.",
        {"content": _text(MAX_CONTENT, "The fact, one sentence, without secrets.")},
        ["content"],
    ),
    _function(
        "memory_recall",
        "Search long-term memory for facts relevant to a question. Returns memories with "
        "ids (pass an id to memory_forget) and, for time-bound facts, how they stand now.",
        {
            "query": _text(MAX_QUERY, "What to look for, in plain words."),
            "top_k": {
                "type": ["integer", "null"],
                "minimum": 1,
                "maximum": MAX_TOP_K,
                "description": "How many memories at most; null for the default (6).",
            },
        },
        ["query"],
    ),
    _function(
        "memory_forget",
        "Archive one memory when the user says it is wrong or asks you to forget it. It "
        "stops being recalled at once; it stays on this machine and the user can restore it.",
        {"memory_id": _MEMORY_ID},
        ["memory_id"],
    ),
)

USER_TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    _function(
        "user_memory_add",
        "USER-LEVEL: store a fact because the user explicitly asked to add it, in their own "
        "words. Unlike memory_remember this may bring back text the user once asked to "
        "forget. Never call it on your own initiative.",
        {"content": _text(MAX_CONTENT, "The fact the user asked to add, without secrets.")},
        ["content"],
    ),
    _function(
        "user_memory_delete",
        "USER-LEVEL: delete one memory permanently because the user explicitly asked for "
        "it. It cannot be restored, and the same text is never extracted again. Prefer "
        "memory_forget (recoverable) unless the user insists on deletion.",
        {"memory_id": _MEMORY_ID},
        ["memory_id"],
    ),
)


def _names(definitions: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    return frozenset(tool["function"]["name"] for tool in definitions)


MODEL_TOOL_NAMES = _names(TOOL_DEFINITIONS)
USER_TOOL_NAMES = _names(USER_TOOL_DEFINITIONS)
TOOL_NAMES = MODEL_TOOL_NAMES  # the name hosts already use for the model's tools

# What a tool call may carry when its host does not fix it (the MCP server without
# `--agent`, `--session` or `--user`). The values pass the same id rules as every id.
CONTEXT_PROPERTIES: dict[str, dict[str, Any]] = {
    "agent_id": _text(MAX_ID, "The agent whose memory this call reads or writes."),
    "session_id": {
        "type": ["string", "null"],
        "minLength": 1,
        "maxLength": MAX_ID,
        "description": "The current conversation's id (adds its session memories), or null.",
    },
    "user_id": {
        "type": ["string", "null"],
        "minLength": 1,
        "maxLength": MAX_ID,
        "description": "The user the conversation is with (adds their memories), or null.",
    },
}

_SCHEMAS = {
    tool["function"]["name"]: tool["function"]["parameters"]
    for tool in (*TOOL_DEFINITIONS, *USER_TOOL_DEFINITIONS)
}


def schema_of(name: str) -> Mapping[str, Any]:
    """The arguments schema of one tool of either family (KeyError for another name)."""
    return _SCHEMAS[name]


def with_context(definition: Mapping[str, Any], fields: Iterable[str]) -> dict[str, Any]:
    """`definition` taking the context `fields` as arguments too; `agent_id` is required,
    the others nullable."""
    result = copy.deepcopy(dict(definition))
    parameters = result["function"]["parameters"]
    for field in fields:
        parameters["properties"][field] = copy.deepcopy(CONTEXT_PROPERTIES[field])
        if field == "agent_id":
            parameters["required"].append(field)
    return result


def strict_definition(definition: Mapping[str, Any]) -> dict[str, Any]:
    """The strict-mode form: `"strict": true`, every property required (optional ones are
    nullable already), only `STRICT_KEYWORDS`."""
    function = definition["function"]
    parameters = _strict_schema(function["parameters"])
    parameters["required"] = list(parameters["properties"])
    strict = {**copy.deepcopy(dict(function)), "strict": True, "parameters": parameters}
    return {"type": "function", "function": strict}


def _strict_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for keyword, value in schema.items():
        if keyword == "properties":
            result[keyword] = {name: _strict_schema(sub) for name, sub in value.items()}
        elif keyword in STRICT_KEYWORDS:
            result[keyword] = copy.deepcopy(value)
    return result


# --- the validator ---------------------------------------------------------------------------
_VALIDATORS: dict[int, Draft202012Validator] = {}


def _validator(schema: Mapping[str, Any]) -> Draft202012Validator:
    # Keyed by identity: the schemas are module constants or a server's own, built once.
    validator = _VALIDATORS.get(id(schema))
    if validator is None or validator.schema is not schema:
        Draft202012Validator.check_schema(schema)
        validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
        _VALIDATORS[id(schema)] = validator
    return validator


def argument_problem(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The most relevant way `arguments` breaks `schema`, as `field: reason`, or None."""
    error = best_match(_validator(schema).iter_errors(arguments))
    return None if error is None else _message(error)


def _message(error: SchemaError) -> str:
    rule = error.validator
    field = ".".join(str(part) for part in error.absolute_path) or "arguments"
    if rule == "required":
        missing = [key for key in error.validator_value if key not in error.instance]
        return f"{missing[0]}: required"
    if rule == "additionalProperties":
        known = error.schema.get("properties", {})
        unknown = sorted(key for key in error.instance if key not in known)
        return f"{unknown[0]}: unknown argument (expected {', '.join(known)})"
    if rule == "type":
        kinds = (
            error.validator_value
            if isinstance(error.validator_value, list)
            else [error.validator_value]
        )
        return f"{field}: must be {' or '.join(_TYPE_NAMES.get(kind, kind) for kind in kinds)}"
    if rule == "minLength":
        minimum = error.validator_value
        return f"{field}: " + (
            "must not be empty" if minimum == 1 else f"at least {minimum} characters"
        )
    if rule == "maxLength":
        return f"{field}: at most {error.validator_value} characters"
    if rule in {"minimum", "maximum"}:
        low, high = error.schema.get("minimum", ""), error.schema.get("maximum", "")
        return f"{field}: must be in {low}..{high}"
    # Any other keyword: name the rule, never the value (jsonschema's text quotes it).
    return f"{field}: breaks the schema's {rule!r} rule"


_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
