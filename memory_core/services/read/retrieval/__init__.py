"""Retrieval: lexical and vector candidates, re-validation, ranking, diagnostics."""
