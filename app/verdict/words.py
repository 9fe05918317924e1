"""How the verdict names a process: its short command and who runs it (user, container or service)."""

from __future__ import annotations

import os
import shlex
from functools import lru_cache

from ..core.model import ProcessSample


def short_command(proc: ProcessSample) -> str:
    """``python3 train.py`` from ``/usr/bin/python3 /home/a/train.py --lr 1e-3``; the name when no command."""
    return _short(proc.command, proc.name or f"PID {proc.pid}")


@lru_cache(maxsize=1024)
def _short(command: str | None, fallback: str) -> str:
    if not command:
        return fallback
    try:
        words = shlex.split(command)  # the command line is shell-quoted: quoted words stay whole
    except ValueError:
        words = command.split()
    if not words:
        return fallback
    head = os.path.basename(words[0])
    if not head.startswith(("python", "node", "java", "ruby", "perl", "bash", "sh")):
        return head
    for i, word in enumerate(words[1:], start=1):
        if word == "-c":  # inline code: its text says nothing useful in a sentence
            return f"{head} -c"
        if word == "-m" and i + 1 < len(words):
            return f"{head} -m {words[i + 1]}"
        if not word.startswith("-"):
            return f"{head} {os.path.basename(word)}"
    return head


def who(proc: ProcessSample) -> str:
    """``alice, container trainer`` (whatever is known)."""
    parts = []
    if proc.user:
        parts.append(proc.user)
    if proc.container is not None:
        parts.append(f"container {proc.container.name or proc.container.id[:12]}")
    elif proc.unit:
        parts.append(f"service {proc.unit}")
    if proc.status == "outside-namespace":
        parts.append("in another PID namespace")
    return ", ".join(parts)


def label(proc: ProcessSample) -> str:
    identity = who(proc)
    name = f"`{short_command(proc)}`" if proc.command or proc.name else f"PID {proc.pid}"
    return f"{name} ({identity})" if identity else name
