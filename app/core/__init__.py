"""The foundation: the model of a snapshot (frozen dataclasses, units in the names, None plus a reason), the
shared vocabulary (reason sets, floors, scores: each rule once), secret masking and the version.

May import nothing from app/: every other layer builds on it, and it stays free of Flask, NVML and /proc."""
