"""The read path: retrieval, ranking, the per-turn contribution and its session runtime."""
