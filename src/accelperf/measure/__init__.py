"""Measurements on the machine accelperf runs on (memory hierarchy, accelerators)."""
