"""The `agent-memory` command line (R-HOST-2): `main.py` wires argparse to one module per command.

See `memory_plugins.cli.main` for how to add a command.
"""
