"""What a terminal command that starts a collector (``snapshot``, ``top``) does before anything else of FanWhy is
imported: it reads the CPU time of the machine and of every process (app.attribution.procscan, standard library
only). Its first answer's CPU % spans from here, so the window that figure needs (app.cli.start) is mostly the
start-up itself: the command line, the settings and the collector's imports happen inside it instead of before it.

The command line is not parsed yet: any argument spelled ``snapshot`` or ``top`` begins it (``fanwhy run -- top``
then costs one scan and nothing else). The scan reads /proc; where the settings name another
(FANWHY_HOST_PROC), it is not used and the command reads its own."""

from __future__ import annotations

from ..attribution import procscan

TYPE_CHECKING = False  # no typing: this runs before anything else is imported
if TYPE_CHECKING:
    from typing import Sequence

COMMANDS = frozenset({"snapshot", "top"})

_scan: procscan.Scan | None = None
_root = "/proc"


def begin(argv: Sequence[str]) -> None:
    """Read the baseline now when ``argv`` may name a command that uses it (once per process)."""
    global _scan
    if _scan is None and COMMANDS.intersection(argv):
        _scan = procscan.scan(_root)


def taken(proc_root: str) -> procscan.Scan | None:
    """The scan ``begin`` read, once, where it read ``proc_root``; None otherwise (the caller reads its own)."""
    global _scan
    scan, _scan = _scan, None
    return scan if proc_root == _root else None
