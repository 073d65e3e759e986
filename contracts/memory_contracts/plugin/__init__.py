"""`PluginConformance`: what an `agent_memory` plugin distribution must do to load (R-ARCH-3).

Subclass it in your plugin's tests; it finds your plugin through the installed entry
points, exactly as `agent-memory` and `open_memory` will:

    from memory_contracts.plugin import PluginConformance

    class TestMyPlugin(PluginConformance):
        entry_point = "my-plugin"                       # or: distribution = "my-plugin"
        options = {"my-embedder": {"dimensions": 64}}   # per registration name

The suite loads the plugin's distribution in a fresh plugin manager in strict mode (so an
import error, a misspelt hook — `check_pending()` — a hook taking arguments its spec lacks,
or a duplicate name fails), checks each registration (name pattern, callable factory, a
known family, a description), builds each one's product with a test `FactoryContext`
(a temporary data directory, `ManualClock` clocks, `PatternSecretPolicy`, your options)
and checks it satisfies its family's port, runs a smoke check per family under a deadline
(an embedding provider: ids, `dimensions()`, one `embed` round trip, an expired deadline
refused), and checks the plugin loads next to every other installed plugin without
shadowing or being shadowed. The port contract suites (`EmbeddingProviderContract`, …) are
the thorough part; this suite proves the plugin is wired so they are worth running.

Options are keyed by registration name, or "family:name" when one name is registered in
two families. An extractor that needs a text provider gets the one the
`conformance_text_provider` fixture returns (None by default); override it.
"""

from memory_contracts.plugin.discovery import (
    PluginUnderTest,
    conformance_context,
    find_plugin,
    load_strictly,
)
from memory_contracts.plugin.smoke import SMOKE_CHECKS
from memory_contracts.plugin.suite import PluginConformance

__all__ = [
    "SMOKE_CHECKS",
    "PluginConformance",
    "PluginUnderTest",
    "conformance_context",
    "find_plugin",
    "load_strictly",
]
