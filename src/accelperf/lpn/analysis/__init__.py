"""Analyses of an LPN over a whole input space, reading its rules from
:mod:`accelperf.lpn.semantics`: input classes (OSDI'24 §4.1, A.1–A.2), performance
interfaces (lpn2pi, §4.2, A.3) and their phase-aware extension, and verification (lpn2smt,
§4.4)."""
