"""`agent-memory mcp`: serve the memory tools to an MCP client (docs/mcp.md).

    agent-memory mcp --agent A --data-dir D                 # stdio, for a desktop assistant
    agent-memory mcp --agent A --transport http --port 8765  # streamable HTTP on loopback

One server per data dir: memory opens before the protocol starts, so a second server on the
same directory fails at once with the data-dir lock's error (exit 2), never half-started.
On stdio the protocol owns stdout; everything this command says goes to stderr.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from memory_core.domain.errors import ConfigError
from memory_plugins.cli.context import CommandContext
from memory_plugins.cli.memory import opened
from memory_plugins.mcp.options import McpOptions

__all__ = ["register", "run"]

DEFAULT_PORT = 8765
# What the mcp extra brings; an ImportError naming one of them means the extra is missing.
_OPTIONAL_PACKAGES = frozenset({"mcp", "mcp_types", "uvicorn", "starlette", "anyio"})


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "mcp",
        help="serve the memory tools over MCP (stdio or streamable HTTP)",
        description="Serve memory_remember, memory_recall and memory_forget to an MCP client. "
        "Needs the mcp extra: pip install 'agent-memory[mcp]'.",
    )
    parser.add_argument(
        "--agent", help="the agent every call is for (default: each call passes agent_id)"
    )
    parser.add_argument(
        "--session", help="the session every call is in (default: each call may pass one)"
    )
    parser.add_argument(
        "--user", help="the user every call is for (default: each call may pass user_id)"
    )
    parser.add_argument(
        "--allow-user-tools",
        action="store_true",
        help="also serve the user-level tools user_memory_add (may bring back forgotten "
        "text) and user_memory_delete (permanent): only for a client the user drives",
    )
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP address (default: loopback)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"HTTP port, 0 for any ({DEFAULT_PORT})"
    )
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path (default: /mcp)")
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (the server has no authentication)",
    )
    parser.set_defaults(func=run)


def run(ctx: CommandContext) -> int:
    args = ctx.args
    options = McpOptions(
        agent_id=args.agent,
        session_id=args.session,
        user_id=args.user,
        allow_user_tools=args.allow_user_tools,
    )
    try:
        from memory_plugins.mcp import transports
        from memory_plugins.mcp.server import MemoryToolServer
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in _OPTIONAL_PACKAGES:
            raise  # a bug of ours, not a missing extra
        raise ConfigError(
            f"agent-memory mcp needs the optional mcp extra ({exc.name} is not installed): "
            "pip install 'agent-memory[mcp]'"
        ) from None
    if args.transport == "http":
        transports.check_host(args.host, allow_remote=args.allow_remote)

    async def serve() -> None:
        async with opened(ctx) as memory:
            tools = MemoryToolServer(memory, options)
            if options.agent_id is not None:
                tools.start_warm_up(options.agent_id)
            try:
                if args.transport == "stdio":
                    await transports.serve_stdio(tools.build())
                else:
                    await transports.serve_http(
                        tools.build(),
                        host=args.host,
                        port=args.port,
                        path=args.path,
                        # stderr, flushed: the one line an operator (or a test) waits for.
                        announce=lambda url: print(
                            f"agent-memory mcp: serving on {url}", file=sys.stderr, flush=True
                        ),
                    )
            finally:
                await tools.stop_warm_ups()

    asyncio.run(serve())
    return 0
