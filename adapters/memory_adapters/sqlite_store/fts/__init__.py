"""SQLite's FTS5 mirror: its maintenance (`mirror`) and the lexical recall over it (`search`)."""

from memory_adapters.sqlite_store.fts.mirror import (
    FORGET_FUNCTION,
    INDEX_FUNCTION,
    configure,
    drop_all,
    drop_owner,
    drop_step,
    mirror_counts,
    mirror_inserted,
    mirror_rowids,
    owner_table,
    owner_tables,
    rebuild,
    register_functions,
)
from memory_adapters.sqlite_store.fts.search import (
    BROAD_FRACTION,
    BROAD_MIN_DOCS,
    broad_terms,
    match_expression,
    ranked,
    short,
)

__all__ = [
    "BROAD_FRACTION",
    "BROAD_MIN_DOCS",
    "FORGET_FUNCTION",
    "INDEX_FUNCTION",
    "broad_terms",
    "configure",
    "drop_all",
    "drop_owner",
    "drop_step",
    "match_expression",
    "mirror_counts",
    "mirror_inserted",
    "mirror_rowids",
    "owner_table",
    "owner_tables",
    "ranked",
    "rebuild",
    "register_functions",
    "short",
]
