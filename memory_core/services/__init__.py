"""Use cases over ports only: retrieval, ingestion, forgetting, directives, gateway."""
