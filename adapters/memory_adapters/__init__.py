"""Implementations of the core's ports. Never imports pluggy or the plugin host (R-ARCH-1/4)."""
