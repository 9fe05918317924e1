"""hwmon trees for tests, made from the captures in tests/fixtures/hwmon/ (``path:value`` lines, as ``grep .``
prints them; `` | `` joins the lines of a multi-line file)."""

from __future__ import annotations

from pathlib import Path

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
