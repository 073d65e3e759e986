"""The model's memory tools: definitions to hand an LLM, and one handler that runs a call.

`TOOL_DEFINITIONS` are in the OpenAI function-calling shape (`{"type": "function",
"function": {"name", "description", "parameters": <JSON schema>}}`), which most chat APIs
and local servers accept. `handle_tool_call` validates the model's arguments against those
same schemas, runs the tool on a `MemoryService`, and returns a JSON-ready dict:

- `memory_remember` stores a fact. Text the user deleted is refused with
  `requires_user_reauthorization` — only the user can bring it back (R-WRITE-5); secret-like
  text is refused without echoing it (R-PRIV-1).
- `memory_recall` returns the relevant memories with their ids and temporal labels.
- `memory_forget` archives a memory: the result says it stays on this machine and can be
  restored by the user (R-FORGET-2).

Results never carry provider secrets, exception messages of providers, or the text of a
refused write (R-PROV-5): errors are a fixed code and a message this module wrote.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import attrs
from cattrs.preconf.json import make_converter

from memory_core.domain.errors import (
    AgentMemoryError,
    NotFound,
    SecretRejected,
    ValidationError,
)
from memory_core.domain.scope import ScopeContext, validate_agent_id
from memory_core.domain.validation import check_text
from memory_core.services.memory import MemoryService, RememberStatus
from memory_core.services.memory.parts import scope_context

__all__ = [
    "TOOL_DEFINITIONS",
    "TOOL_NAMES",
    "RecalledMemoryView",
    "ToolResult",
    "handle_tool_call",
    "tool_definitions",
]

_MAX_CONTENT = 2_000
_MAX_QUERY = 2_000
_MAX_TOP_K = 20


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


TOOL_DEFINITIONS: tuple[dict[str, Any], ...] = (
    _function(
        "memory_remember",
        "Save one durable fact about the user or their work (a preference, a plan, a "
        "decision) to long-term memory, as a short third-person sentence such as 'The user "
        "prefers tea.'. Credentials (passwords, API keys, tokens) are always refused. Text "
        "the user asked to forget cannot be saved again by you.",
        {
            "content": {
                "type": "string",
                "minLength": 1,
                "maxLength": _MAX_CONTENT,
                "description": "The fact, one sentence, without secrets.",
            }
        },
        ["content"],
    ),
    _function(
        "memory_recall",
        "Search long-term memory for facts relevant to a question. Returns memories with "
        "ids (pass an id to memory_forget) and, for time-bound facts, how they stand now.",
        {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": _MAX_QUERY,
                "description": "What to look for, in plain words.",
            },
            "top_k": {
                "type": "integer",
                "minimum": 1,
                "maximum": _MAX_TOP_K,
                "description": "How many memories at most (default 6).",
            },
        },
        ["query"],
    ),
    _function(
        "memory_forget",
        "Archive one memory when the user says it is wrong or asks you to forget it. It "
        "stops being recalled at once; it stays on this machine and the user can restore it.",
        {
            "memory_id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 200,
                "description": "The id memory_recall returned for the memory.",
            }
        },
        ["memory_id"],
    ),
)
TOOL_NAMES = frozenset(tool["function"]["name"] for tool in TOOL_DEFINITIONS)
_SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOL_DEFINITIONS}


def tool_definitions() -> list[dict[str, Any]]:
    """A fresh copy of the definitions, safe for a host to amend."""
    return copy.deepcopy(list(TOOL_DEFINITIONS))


# --- results ---------------------------------------------------------------------------------
@attrs.frozen(kw_only=True)
class RecalledMemoryView:
    """One recalled memory as the model sees it."""

    id: str
    content: str
    kind: str
    score: float
    when: str | None = None  # e.g. "previously planned; until 2026-05-18", None if timeless


@attrs.frozen(kw_only=True)
class ToolResult:
    """What a tool call returns; fields left None are omitted from the JSON."""

    ok: bool
    status: str
    message: str
    id: str | None = None
    recoverable: bool | None = None
    memories: tuple[RecalledMemoryView, ...] | None = None
    degradations: tuple[str, ...] | None = None


# The tool-result boundary's converter: None fields are left out so the model reads less.
_converter = make_converter(omit_if_default=True)


def _error(status: str, message: str) -> ToolResult:
    return ToolResult(ok=False, status=status, message=message)


# --- the handler -------------------------------------------------------------------------------
async def handle_tool_call(
    memory: MemoryService,
    agent_id: str,
    session_id: str | None,
    name: str,
    arguments: str | Mapping[str, Any] | None,
    *,
    user_id: str | None = None,
    project_id: str | None = None,
) -> dict[str, Any]:
    """Run one tool call of the model for `agent_id` and return its JSON-ready result.

    `user_id` and `project_id` are the host's, never the model's: recall sees their claims
    besides the agent's and the session's, and a fact the model saves goes to the user's
    scope (else the project's, else the agent's) so another user never reads it (R-SCOPE-1).

    `arguments` is what the model sent: a JSON object, as text (OpenAI's `arguments`) or
    already parsed. Mistakes of the model (unknown tool, bad arguments, an unknown id) come
    back as `{"ok": false, ...}` results it can read; a bad `agent_id` is the host's bug and
    raises ValidationError, as does a bad `session_id`.
    """
    validate_agent_id(agent_id)
    context = scope_context(session_id, user_id, project_id)
    if name not in TOOL_NAMES:
        result = _error("unknown_tool", f"No tool named {name!r}; use one of {sorted(TOOL_NAMES)}.")
    else:
        parsed = _parse_arguments(name, arguments)
        if isinstance(parsed, ToolResult):
            result = parsed
        else:
            result = await _run(memory, agent_id, context, name, parsed)
    return _converter.unstructure(result)


async def _run(
    memory: MemoryService,
    agent_id: str,
    context: ScopeContext,
    name: str,
    arguments: Mapping[str, Any],
) -> ToolResult:
    try:
        if name == "memory_remember":
            return await _remember(memory, agent_id, context, arguments["content"])
        if name == "memory_recall":
            return await _recall(memory, agent_id, context, arguments)
        return await _forget(memory, agent_id, arguments["memory_id"])
    except SecretRejected as exc:
        return _error(
            "refused_secret",
            f"Not saved: the text looks like a credential ({', '.join(exc.kinds)}). "
            "Credentials are never kept in memory; do not repeat them.",
        )
    except NotFound:
        return _error("not_found", "No memory with that id (use an id from memory_recall).")
    except ValidationError as exc:
        # Our own messages: a field name and a reason, never the content (errors.py).
        return _error("invalid_arguments", str(exc))
    except AgentMemoryError as exc:
        # Provider and store messages stay in the logs; the model gets the kind of failure.
        return _error("unavailable", f"Memory is unavailable right now ({type(exc).__name__}).")


async def _remember(
    memory: MemoryService, agent_id: str, context: ScopeContext, content: str
) -> ToolResult:
    outcome = await memory.remember(
        agent_id, content, session_id=context.session_id, scope=context.write_scope()
    )
    if outcome.status is RememberStatus.REQUIRES_USER_REAUTHORIZATION:
        return _error(
            outcome.status.value,
            "Not saved: the user asked to forget this. Only the user can add it back, "
            "explicitly; do not try to save it again.",
        )
    if outcome.status is RememberStatus.ALREADY_KNOWN:
        return ToolResult(
            ok=True, status=outcome.status.value, message="Already in memory.", id=outcome.claim_id
        )
    return ToolResult(ok=True, status=outcome.status.value, message="Saved.", id=outcome.claim_id)


async def _recall(
    memory: MemoryService, agent_id: str, context: ScopeContext, arguments: Mapping[str, Any]
) -> ToolResult:
    result = await memory.recall(
        agent_id,
        arguments["query"],
        session_id=context.session_id,
        user_id=context.user_id,
        project_id=context.project_id,
        top_k=arguments.get("top_k"),
    )
    memories = tuple(
        RecalledMemoryView(
            id=item.claim.id,
            content=item.claim.content,
            kind=item.claim.kind.value,
            score=round(item.score, 4),
            when=item.assessment.annotation,
        )
        for item in result.items
    )
    return ToolResult(
        ok=True,
        status="found" if memories else "nothing_found",
        message=f"{len(memories)} memories." if memories else "Nothing relevant in memory.",
        memories=memories,
        degradations=tuple(d.value for d in result.degradations) or None,
    )


async def _forget(memory: MemoryService, agent_id: str, memory_id: str) -> ToolResult:
    outcome = await memory.forget(agent_id, memory_id)
    return ToolResult(
        ok=True,
        status="archived",
        message=outcome.note,
        id=outcome.claim_id,
        recoverable=True,
    )


# --- arguments -------------------------------------------------------------------------------
def _parse_arguments(
    name: str, arguments: str | Mapping[str, Any] | None
) -> Mapping[str, Any] | ToolResult:
    """The arguments checked against the tool's own schema, or the error result to return."""
    if arguments is None or arguments == "":
        arguments = {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return _error("invalid_arguments", "arguments: not valid JSON")
    if not isinstance(arguments, Mapping):
        return _error("invalid_arguments", "arguments: must be a JSON object")
    problem = _schema_problem(_SCHEMAS[name], arguments)
    if problem is not None:
        return _error("invalid_arguments", problem)
    return arguments


def _schema_problem(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """The first way `arguments` breaks `schema` (the subset of JSON schema used above)."""
    properties: Mapping[str, Any] = schema["properties"]
    for key in schema["required"]:
        if key not in arguments:
            return f"{key}: required"
    for key, value in arguments.items():
        rule = properties.get(key)
        if rule is None:
            return f"{key}: unknown argument (expected {', '.join(properties)})"
        if rule["type"] == "string":
            try:
                check_text(value, key)  # the boundary's one text rule (R-DOM-4)
            except ValidationError as exc:
                return str(exc)
            if len(value) < rule.get("minLength", 0):
                return f"{key}: must not be empty"
            if len(value) > rule.get("maxLength", len(value)):
                return f"{key}: at most {rule['maxLength']} characters"
        elif rule["type"] == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                return f"{key}: must be an integer"
            if not rule.get("minimum", value) <= value <= rule.get("maximum", value):
                return f"{key}: must be in {rule['minimum']}..{rule['maximum']}"
    return None
