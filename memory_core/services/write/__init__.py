"""The write path: ingestion from the tape, chunking, the decision step, fences."""
