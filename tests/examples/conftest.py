"""The examples' tests reuse the httpx provider tests' loopback OpenAI-compatible server
(`tests/adapters/httpx_providers/httpx_loopback.py`), imported by module name as there."""

from __future__ import annotations

import sys
from pathlib import Path

LOOPBACK_DIR = Path(__file__).resolve().parents[1] / "adapters" / "httpx_providers"
if str(LOOPBACK_DIR) not in sys.path:
    sys.path.insert(0, str(LOOPBACK_DIR))
