"""The DuckDB vector path stays an exact scan: no extension SQL, no approximate index (R-ARCH-6).

The guard reads string literals (f-string parts included, docstrings excluded) and method calls
under `adapters/memory_adapters/duckdb_vectors`. `INSTALL`/`LOAD` are flagged as uppercase SQL
words anywhere, or as a bare `install x` / `load x` statement in any case; `hnsw` and `vss` in
any case; and the `install_extension` / `load_extension` connection methods.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .guards import scan_vector_path
from .layout import VECTORS_DIR, describe, plant

PLANTED_VECTOR_VIOLATIONS = [
    pytest.param("con.execute('INSTALL httpfs')\n", "vector-path-extension-sql", id="INSTALL"),
    pytest.param("con.execute(\"LOAD 'spatial';\")\n", "vector-path-extension-sql", id="LOAD"),
    pytest.param("con.execute('force install json')\n", "vector-path-extension-sql", id="lower"),
    pytest.param("con.execute(f'LOAD {name}')\n", "vector-path-extension-sql", id="f-string"),
    pytest.param(
        "con.execute('SELECT 1;\\n  load excel;')\n", "vector-path-extension-sql", id="second-stmt"
    ),
    pytest.param("con.load_extension('json')\n", "vector-path-extension-sql", id="load_extension"),
    pytest.param(
        "con.install_extension('json')\n", "vector-path-extension-sql", id="install_extension"
    ),
    pytest.param(
        "con.execute('CREATE INDEX i ON vectors USING HNSW (embedding)')\n",
        "vector-path-approximate-index",
        id="hnsw-index",
    ),
    pytest.param(
        "con.execute('SET hnsw_enable_experimental_persistence = true')\n",
        "vector-path-approximate-index",
        id="hnsw-setting",
    ),
    pytest.param("EXTENSION = 'Vss'\n", "vector-path-approximate-index", id="vss"),
]

# What an exact-scan adapter writes; none of it is extension SQL or an approximate index.
ALLOWED_VECTOR_SOURCE = '''\
"""Exact scan only: no HNSW index, and no INSTALL or LOAD of the vss extension."""

import logging

logger = logging.getLogger(__name__)
CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
QUERY = "SELECT id, array_cosine_distance(v, ?::FLOAT[384]) AS d FROM vectors ORDER BY d LIMIT ?"


def warn(error):
    logger.warning("load failed: %s; download and payload sizes unchanged", error)
'''


def test_real_vector_path_uses_no_extension_or_approximate_index() -> None:
    """R-ARCH-6: no INSTALL/LOAD or hnsw/vss reaches the DuckDB vector adapter."""
    if not VECTORS_DIR.is_dir():
        pytest.skip("adapters/memory_adapters/duckdb_vectors does not exist yet")
    findings = scan_vector_path(VECTORS_DIR)
    assert not findings, "the vector path loads an extension or index:\n" + describe(findings)


@pytest.mark.parametrize(("source", "rule"), PLANTED_VECTOR_VIOLATIONS)
def test_vector_path_scan_reports_planted_extension_or_index(
    tmp_path: Path, source: str, rule: str
) -> None:
    """R-ARCH-6: the guard fails on extension SQL or an approximate index, naming file and rule."""
    vectors = tmp_path / "memory_adapters" / "duckdb_vectors"
    plant(vectors / "__init__.py", '"""DuckDB vectors."""\n')
    target = vectors / "store.py"
    plant(target, "con = name = None\n")
    offset = plant(target, source)

    findings = scan_vector_path(vectors)

    assert [(f.path, f.line, f.rule) for f in findings] == [(target, offset + 1, rule)], describe(
        findings
    )


def test_vector_path_scan_accepts_exact_scan_sql_and_docstrings(tmp_path: Path) -> None:
    """R-ARCH-6: docstrings, disabled autoload settings and plain words like 'load' pass."""
    vectors = tmp_path / "duckdb_vectors"
    plant(vectors / "store.py", ALLOWED_VECTOR_SOURCE)

    findings = scan_vector_path(vectors)

    assert not findings, describe(findings)
