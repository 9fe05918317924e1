"""What kind of busy in the terminal's answers: `snapshot`'s lines and `top`'s frame (from the JSON view, as a remote
server serves it) each give the GPU's activity counters a line that fits 80 columns (fakes shaped from one H200:
tests/fixtures/nvml/h200-gpm.json)."""

from __future__ import annotations

from dataclasses import replace

from app.cli.terminal import render
from app.cli.topstate import History, TopState
from app.cli.topview import ASCII, UNICODE, frame
from app.collect.serialize import snapshot_view
from app.core.cells import width
from app.verdict.explain import explain
from tests.support.builders import snap
from tests.unit.test_busy_kind import h200_under, one_job

LINE = "  0 SM 96 %  occ 12 %  tensor 0 %  FP32 76 %  DRAM 5 %  (FP32, tensor idle)"


def fp32_snapshot() -> object:
    card, job = one_job("fp32_matmul")
    taken = snap([card], [job])
    return replace(taken, verdict=explain(taken))


def test_snapshot_gives_the_gpu_an_activity_line_in_80_columns() -> None:
    out = render(fp32_snapshot(), width=80)  # type: ignore[arg-type]  # a Snapshot, typed loosely above
    assert LINE in out.splitlines() and width(LINE) <= 80


def test_top_shows_the_same_line_from_the_json_view() -> None:
    view = snapshot_view(fp32_snapshot())  # type: ignore[arg-type]  # as above
    for glyphs in (UNICODE, ASCII):
        lines = ["".join(t for t, _ in line) for line in frame(view, TopState(), History(), 80, 30, glyphs)]
        assert any(line.rstrip() == LINE for line in lines), lines
        assert all(width(line) <= 80 for line in lines)


def test_a_gpu_without_counters_has_no_activity_line() -> None:
    card, job = one_job("fp32_matmul")
    bare = snap([replace(card, activity=None)], [job])
    assert "  0 SM " not in render(replace(bare, verdict=explain(bare)), width=80)
    assert h200_under("idle").activity is not None
