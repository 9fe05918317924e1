"""hwmon trees for tests, made from the captures in tests/fixtures/hwmon/ (``path:value`` lines, as ``grep .``
prints them; `` | `` joins the lines of a multi-line file)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from app.core.fan import Fan
from app.core.model import GpuSample

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "hwmon"


def hwmon_tree(root: Path, *names: str) -> Path:
    """``root``/class/hwmon/... filled from the named fixtures; returns ``root`` (a sys root for the reader)."""
    for name in names:
        for line in (FIXTURES / f"{name}.txt").read_text().splitlines():
            if not line or line.startswith("#"):
                continue
            path, _, value = line.partition(":")
            target = root / "class" / "hwmon" / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(value.replace(" | ", "\n") + "\n")
    return root


def judged_fans(root: Path, gpus: Sequence[GpuSample] = ()) -> tuple[Fan, ...]:
    """The fans of the hwmon tree under ``root`` as the fan service gives them: read, then judged by the fan wing
    over the tree's own temperatures (what the page, ``top`` and the alerts show)."""
    from app.collect.fans import FanService
    from app.collect.hwmon import read_temperatures
    from tests.support.builders import snap

    base = snap(list(gpus))
    host = replace(base.host, temperatures=read_temperatures(root))
    service = FanService(sys_root=str(root), etc_root=str(root / "no-etc"))
    return service.read(base.gpus, host)[0]
