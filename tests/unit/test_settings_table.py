"""docs/CONFIGURATION.md's table of settings is the declarations' (app/collect/settings.py), row for row."""

from __future__ import annotations

from dataclasses import fields

from app.collect.declare import declared
from app.collect.settings import Settings
from tests.support.settings_table import DOC, rewritten


def test_the_docs_table_is_made_from_the_declarations() -> None:
    page = DOC.read_text()
    assert page == rewritten(page), "run: python -m tests.support.settings_table"


def test_every_setting_has_its_row_and_no_row_is_left_over() -> None:
    """The table holds each declared variable once, and nothing else (a setting dropped from the code leaves no row
    behind; one added gets one)."""
    page = DOC.read_text()
    table = page[page.index("settings table:"):page.index("end of the settings table")]
    listed = [line.split("|")[1].strip().strip("`") for line in table.splitlines()[1:] if line.startswith("| `")]
    assert listed == [declared(item).env for item in fields(Settings)]
