"""Untrusted text on a terminal (app.core.cells): shown and never obeyed, laid out in cells. The widths are those
UAX #11 gives (East Asian Width W and F are two cells, combining marks none): what ``wcwidth`` and the terminals
count."""

from __future__ import annotations

import pytest

from app.core.cells import cut, fit, pad, shown, width, wrap

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: what follows it is drawn reversed ("exe.txt" passes for "txt.exe")


@pytest.mark.parametrize(("raw", "seen"), [
    ("python train.py", "python train.py"),
    ("evil\x1b[2Jname", "evil\\x1b[2Jname"),
    ("bell\x07", "bell\\x07"),
    ("two\nlines", "two\\x0alines"),
    ("c1\x9bcsi", "c1\\x9bcsi"),
    (f"invoice{RLO}fdp.exe", "invoice\\u202efdp.exe"),
    ("isolate\u2066x\u2069", "isolate\\u2066x\\u2069"),
    ("zero\u200bwidth", "zero\\u200bwidth"),
    ("line\u2028sep", "line\\u2028sep"),
    ("训练 模型.py", "训练 模型.py"),  # printable wide text stays as it is
])
def test_what_would_act_on_the_terminal_is_escaped(raw: str, seen: str) -> None:
    assert shown(raw) == seen


@pytest.mark.parametrize(("text", "cells"), [
    ("abc", 3), ("训练", 4), ("e\u0301", 1), ("日本語のコマンド", 16), ("🔥", 2), ("", 0)])
def test_widths_are_counted_in_cells(text: str, cells: int) -> None:
    assert width(text) == cells


def test_fit_and_cut_never_pass_the_cells_given_and_never_split_a_wide_character() -> None:
    text = "python 训练模型训练模型.py --epochs 10"
    for cells in range(1, 45):
        fitted = fit(text, cells)
        assert width(fitted) <= cells, (cells, fitted)
        assert width(cut(text, cells)) <= cells
    assert fit(text, 12) == "python 训练…"  # 7 + 4 cells + the ellipsis: the next character would take two
    assert fit("short", 10) == "short" and pad("训练", 6) == "训练  " and pad("7", 3, right=True) == "  7"


def test_wrap_keeps_every_word_in_its_cells_and_marks_what_it_left_out() -> None:
    text = "command (secrets masked): python -m torch.distributed.run --nproc 8 训练.py " + "x" * 130
    lines = wrap(text, 40, indent="  ")
    assert all(width(line) <= 40 for line in lines)
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")  # nothing lost
    assert all(line.startswith("  ") for line in lines[1:])
    short = wrap(text, 40, lines=2, indent="  ")
    assert len(short) == 2 and short[-1].endswith("…") and all(width(line) <= 40 for line in short)
    assert wrap("PID 10  train", 80) == ["PID 10  train"]  # the spaces inside a line are kept
