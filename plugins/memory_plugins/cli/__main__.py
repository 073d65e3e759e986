"""`python -m memory_plugins.cli`: the same as the `agent-memory` console script."""

from __future__ import annotations

import sys

from memory_plugins.cli.main import main

sys.exit(main())
