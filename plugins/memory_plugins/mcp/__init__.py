"""`agent-memory mcp`: the memory tools over the Model Context Protocol (docs/mcp.md).

`server` turns a `MemoryService` into an MCP server (the tools, their schemas and trust
rules are `memory_plugins.tools`'s, not copies); `transports` serves it over stdio or
streamable HTTP. Both need the optional `mcp` extra; the CLI command imports them only when
it runs, so `agent-memory` works without it.
"""
