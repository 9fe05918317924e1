"""The command line's entry point: ``fanwhy`` (the installed command) and ``python -m app``.

It imports nothing at first: a command that starts a collector (``snapshot``, ``top``) reads the CPU time of the
machine and of every process (app.cli.early) before the command line, the settings and the collector are imported,
so that its first answer's CPU % spans them instead of waiting after them. The commands are app.cli.main's."""

from __future__ import annotations

import sys


def run() -> None:
    """The console entry point (app.cli.main.run: exit codes as documented)."""
    from .cli.early import begin

    begin(sys.argv[1:])
    from .cli.main import run as commands

    commands()


if __name__ == "__main__":
    run()
