"""`python -m benchmarks.ingestion` = `python -m benchmarks ingestion`."""

import sys

from benchmarks.ingestion import main

sys.exit(main())
