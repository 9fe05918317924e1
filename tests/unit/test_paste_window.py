"""A paste far longer than any machine's capture is read on its start and its end (app.collect.pasted.windowed): a
log or a listing run over and over (a `watch` of `sensors` for hours) has its current state at its end, and each
reader costs the paste's length (4 MiB of one listing took half a minute). What was not read is said."""

from __future__ import annotations

from pathlib import Path

from app.collect.pasted import HEAD_CHARS, TAIL_CHARS, window_said, windowed
from tests.unit.test_fan_readers import explain

SNAPSHOT = ("nct6798-isa-0290\nAdapter: ISA adapter\nfan2: {rpm} RPM\nCPUTIN: +40.0°C\n\n"
            "k10temp-pci-00c3\nAdapter: PCI adapter\nTctl: +{cpu}.0°C\n\n")


def test_a_capture_of_usual_length_is_read_whole() -> None:
    text = SNAPSHOT.format(rpm=800, cpu=45) * 100
    assert windowed(text) == text and window_said(text) == ""


def test_a_long_paste_keeps_its_start_and_its_end_at_line_breaks_and_says_the_cut() -> None:
    first, last = SNAPSHOT.format(rpm=1111, cpu=41), SNAPSHOT.format(rpm=1650, cpu=74)
    text = first + SNAPSHOT.format(rpm=800, cpu=45) * 40000 + last
    cut = windowed(text)
    assert cut.startswith(first) and cut.endswith(last)
    assert len(cut) <= HEAD_CHARS + TAIL_CHARS + 200
    lines = set(text.split("\n"))
    assert all(line in lines or line.startswith("#~ ") for line in cut.split("\n"))  # whole lines only
    assert window_said(cut) == f" (of its {len(text) / (1 << 20):.1f} MiB, the first 64 KiB and the last 192 KiB)"


def test_a_watch_log_of_megabytes_is_answered_from_its_last_snapshot(tmp_path: Path) -> None:
    """A MiB of one machine's listing: its last snapshot's fan and CPU, and "read as" names what was read."""
    text = SNAPSHOT.format(rpm=800, cpu=45) * 12000 + SNAPSHOT.format(rpm=1650, cpu=74)
    assert len(text) > 1 << 20
    code, answer = explain(text, tmp_path)
    assert code == 0, answer
    fans = answer["fans"]
    assert isinstance(fans, list) and [(f["chip"], f["rpm"]) for f in fans] == [("nct6798", 1650)]
    read_as = answer["read_as"]
    assert isinstance(read_as, list) and any("the first 64 KiB and the last 192 KiB" in kind for kind in read_as)
