"""How the verdict names a process: its short command and who runs it (user, container or service)."""

from __future__ import annotations

from ..core.model import ProcessSample
from ..core.program import display_name


def short_command(proc: ProcessSample) -> str:
    """The program a person knows the process by (app.core.program: ``python3 train.py``, ``vllm serve``)."""
    return display_name(proc)


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
