"""The decision step: what an extracted candidate does to stored claims."""
