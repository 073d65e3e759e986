"""Evaluation: behaviour fixtures and retrieval metrics (R-BEYOND-2)."""
