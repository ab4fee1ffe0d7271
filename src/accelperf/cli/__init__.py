"""The `accelperf` command. Parses, calls the models, renders; computes nothing itself.

Every error a user can cause ends as one line on stderr and exit status 2; a simulation
that deadlocks or hits a limit prints its report and exits with status 1.
"""

from .app import cli, main      # the command families load on first use (app.CommandFamilies)

__all__ = ["cli", "main"]
