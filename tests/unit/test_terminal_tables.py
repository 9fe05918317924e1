"""The terminal's tables (app.cli.terminal) in the terminal's width: columns shrink with an ellipsis, counted in
cells, and the mark of a guess ("(probably)", a learned source's confidence) is never the part cut."""

from __future__ import annotations

from app.cli.terminal import fan_table
from app.core.cells import width
from app.core.fan import Fan


def fans() -> list[Fan]:
    guess = Fan("hwmon:nct6798/fan2", "nct6798", 2, "CPU fan on the board's CPU_FAN header", rpm=1140,
                source="the hottest of k10temd Tctl, amdgpu edge, amdgpu junction and nvme Composite",
                source_from="named", state="running")
    learned = Fan("hwmon:nct6798/fan3", "nct6798", 3, "前面板风扇 (front panel, 三个)", rpm=900,
                  source="nct6798 SYSTIN", source_from="learned", confidence=0.82, state="running")
    broken = Fan("hwmon:nct6798/fan4", "nct6798", 4, "Rear exhaust", rpm=0, state="failed",
                 alarm="its driver flags it faulty (fan4_fault): the fan, its cable or its header has failed")
    return [guess, learned, broken]


def test_an_80_column_table_fits_and_keeps_every_guess_marked() -> None:
    lines = fan_table(fans(), 80)
    assert all(width(line) <= 80 for line in lines), [width(line) for line in lines]
    assert "(probably)" in lines[1] and "(learned, 82 % sure)" in lines[2]
    assert "…" in lines[1] and "1,140 RPM" in lines[1]  # numbers grouped as the verdict groups them
    assert lines[3].rstrip().endswith("…")  # the note, cut where the terminal ends


def test_a_pipe_gets_every_cell_whole() -> None:
    lines = fan_table(fans())
    assert "the hottest of k10temd Tctl, amdgpu edge, amdgpu junction and nvme Composite (probably)" in lines[1]
    assert "the fan, its cable or its header has failed" in lines[3] and "…" not in "".join(lines)
