"""Architecture guard tests: import-linter contracts, AST scans and runtime import isolation."""
