"""Background ingestion: extraction passes over the tape, cursors, outcomes."""
