"""The vector index: embedding, certificates and coverage over the vector store."""
