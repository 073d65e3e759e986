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

The user-level tools (`user_memory_add`, `user_memory_delete`; `tool_schemas` says why they
are apart) run only when the caller passes `allow_user_tools=True`: a surface the user
drives, or an MCP server its operator started with `--allow-user-tools`.

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
from memory_plugins.tool_schemas import (
    MODEL_TOOL_NAMES,
    TOOL_DEFINITIONS,
    TOOL_NAMES,
    USER_TOOL_DEFINITIONS,
    USER_TOOL_NAMES,
    argument_problem,
    schema_of,
    strict_definition,
)

__all__ = [
    "TOOL_DEFINITIONS",
    "TOOL_NAMES",
    "USER_TOOL_DEFINITIONS",
    "USER_TOOL_NAMES",
    "RecalledMemoryView",
    "ToolResult",
    "error_result",
    "handle_tool_call",
    "refusal",
    "tool_definitions",
]


def tool_definitions(*, strict: bool = False, user_tools: bool = False) -> list[dict[str, Any]]:
    """A fresh copy of the model's definitions, safe for a host to amend; `strict` gives the
    strict-mode form (`strict_definition`), `user_tools` appends the user-level ones (only
    for a surface the user drives, never for a model acting alone)."""
    definitions = [*TOOL_DEFINITIONS, *(USER_TOOL_DEFINITIONS if user_tools else ())]
    if strict:
        return [strict_definition(definition) for definition in definitions]
    return copy.deepcopy(definitions)


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


def error_result(status: str, message: str) -> dict[str, Any]:
    """An `{"ok": false, ...}` result in the handler's JSON shape, for a surface (the MCP
    server) that refuses a call before it reaches `handle_tool_call`."""
    return _converter.unstructure(_error(status, message))


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
    allow_user_tools: bool = False,
) -> dict[str, Any]:
    """Run one tool call of the model for `agent_id` and return its JSON-ready result.

    `arguments` is what the model sent: a JSON object, as text (OpenAI's `arguments`) or
    already parsed. Mistakes of the model (unknown tool, bad arguments, an unknown id) come
    back as `{"ok": false, ...}` results it can read; a bad `agent_id` is the host's bug and
    raises ValidationError, as does a bad `session_id`, `user_id` or `project_id`. Those two are
    the host's, never the model's: recall sees their claims besides the agent's and the
    session's, and a fact the model saves goes to the user's scope (else the project's, else
    the agent's) so another user never reads it (R-SCOPE-1). The user-level tools run only
    with `allow_user_tools`; without it a call to one is refused as `user_tool_not_enabled`.
    """
    validate_agent_id(agent_id)
    context = scope_context(session_id, user_id, project_id)
    refused = _refusal(name, allow_user_tools=allow_user_tools)
    if refused is not None:
        result = refused
    else:
        parsed = _parse_arguments(name, arguments)
        if isinstance(parsed, ToolResult):
            result = parsed
        else:
            result = await _run(memory, agent_id, context, name, parsed)
    return _converter.unstructure(result)


def refusal(name: str, *, allow_user_tools: bool) -> dict[str, Any] | None:
    """The result refusing a call of `name` before it runs (an unknown tool, or a user-level
    one that is not enabled), or None when `handle_tool_call` would run it."""
    refused = _refusal(name, allow_user_tools=allow_user_tools)
    return None if refused is None else _converter.unstructure(refused)


def _refusal(name: str, *, allow_user_tools: bool) -> ToolResult | None:
    if name in USER_TOOL_NAMES and not allow_user_tools:
        return _error(
            "user_tool_not_enabled",
            f"{name} is a user-level operation and is not enabled here; "
            "use memory_forget to archive a memory.",
        )
    if name not in MODEL_TOOL_NAMES | USER_TOOL_NAMES:
        names = sorted(MODEL_TOOL_NAMES | (USER_TOOL_NAMES if allow_user_tools else set()))
        return _error("unknown_tool", f"No tool named {name!r}; use one of {names}.")
    return None


async def _run(
    memory: MemoryService,
    agent_id: str,
    context: ScopeContext,
    name: str,
    arguments: Mapping[str, Any],
) -> ToolResult:
    try:
        if name in {"memory_remember", "user_memory_add"}:
            user_add = name == "user_memory_add"
            return await _remember(memory, agent_id, context, arguments["content"], user_add)
        if name == "memory_recall":
            return await _recall(memory, agent_id, context, arguments)
        if name == "memory_forget":
            return await _forget(memory, agent_id, arguments["memory_id"])
        return await _delete(memory, agent_id, arguments["memory_id"])
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
    memory: MemoryService, agent_id: str, context: ScopeContext, content: str, user_add: bool
) -> ToolResult:
    outcome = await memory.remember(
        agent_id,
        content,
        session_id=context.session_id,
        scope=context.write_scope(),
        user_add=user_add,
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
    message = "Saved, at the user's request." if outcome.reauthorized else "Saved."
    return ToolResult(ok=True, status=outcome.status.value, message=message, id=outcome.claim_id)


async def _recall(
    memory: MemoryService, agent_id: str, context: ScopeContext, arguments: Mapping[str, Any]
) -> ToolResult:
    result = await memory.recall(
        agent_id,
        arguments["query"],
        session_id=context.session_id,
        user_id=context.user_id,
        project_id=context.project_id,
        top_k=arguments.get("top_k"),  # null and absent both mean the default
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


async def _delete(memory: MemoryService, agent_id: str, memory_id: str) -> ToolResult:
    await memory.delete(agent_id, memory_id)
    return ToolResult(
        ok=True,
        status="deleted",
        message="Deleted permanently, at the user's request; it cannot be restored.",
        id=memory_id,
        recoverable=False,
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
    problem = argument_problem(schema_of(name), arguments)
    if problem is None:
        problem = _text_problem(arguments)
    if problem is not None:
        return _error("invalid_arguments", problem)
    return arguments


def _text_problem(arguments: Mapping[str, Any]) -> str | None:
    """The boundary's one text rule (R-DOM-4: valid Unicode, not blank), which JSON schema
    cannot say, on every string argument the schema let through."""
    for key, value in arguments.items():
        if isinstance(value, str):
            try:
                check_text(value, key)
            except ValidationError as exc:
                return str(exc)
    return None
