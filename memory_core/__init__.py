"""agent-memory's pure core: domain rules, ports and use cases.

Imports only the standard library, attrs and cattrs (R-ARCH-1). Nothing here performs I/O
or reads a wall clock; time comes from the clock ports.
"""

from __future__ import annotations

__version__ = "0.1.0"
__all__ = ["__version__"]
