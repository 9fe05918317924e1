"""The settings table of docs/CONFIGURATION.md, made from the declarations (app/collect/settings.py): one row per
setting, between two marker lines. ``python -m tests.support.settings_table`` rewrites it;
tests/unit/test_settings_table.py fails when it is out of date."""

from __future__ import annotations

import math
from dataclasses import fields
from pathlib import Path

from app.collect.declare import Declared, declared, plain, shown
from app.collect.settings import Settings
from tests.support.corpus_table import cell

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "CONFIGURATION.md"
BEGIN = "<!-- settings table: made by `python -m tests.support.settings_table` from app/collect/settings.py -->"
END = "<!-- end of the settings table -->"


def meaning(said: Declared) -> str:
    """The help, the range or choices, a secret's file, then the further words."""
    text = said.help
    unit = f" {said.unit}" if said.unit else ""
    if said.choices:
        text += f" (one of {', '.join(f'`{c}`' for c in said.choices)})"
    elif not math.isinf(said.low) and not math.isinf(said.high):
        text += f" ({plain(said.low)}–{plain(said.high)}{unit})"
    elif not math.isinf(said.low) and said.low != 0:  # "at least 0" says nothing a reader would not assume
        text += f" (at least {plain(said.low)}{unit})"
    if said.from_file:
        text += f"; or read from the file named by `{said.env}_FILE`"
    if said.more:
        text += ". " + said.more
    return text


def rows() -> list[str]:
    out = ["| variable | flag | default | meaning |", "|---|---|---|---|"]
    for item in fields(Settings):
        said = declared(item)
        flag = "–" if said.flag is None else f"`{said.flag}`" if not said.repeat else \
            f"`{said.flag} {said.metavar}` (repeatable)"
        default = shown(item)
        default = default if default.startswith("`") or " " in default or default == "unset" else f"`{default}`"
        out.append(f"| `{said.env}` | {cell(flag)} | {cell(default)} | {cell(meaning(said))} |")
    return out


def rewritten(page: str) -> str:
    """``page`` with the text between the markers replaced by the table made now."""
    head, begin, rest = page.partition(BEGIN)
    _, end, tail = rest.partition(END)
    if not begin or not end:
        raise ValueError(f"{DOC.name} has lost its settings-table markers")
    return head + BEGIN + "\n" + "\n".join(rows()) + "\n" + END + tail


if __name__ == "__main__":
    DOC.write_text(rewritten(DOC.read_text()))
    print(f"wrote {DOC}")
