"""`python -m accelperf ...`: the same command as the `accelperf` console script."""

import sys

from .cli import main

sys.exit(main())
