"""Domain values and rules: claims, temporal, scope, provenance, directives, policy."""
