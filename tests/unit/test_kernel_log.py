"""The kernel's log of a CPU slowing for heat, read as arch/x86/kernel/cpu/mce/therm_throt.c prints it: "CPU%d: %s
temperature above threshold, cpu clock throttled (total events = %lu)" when it asserts and "CPU%d: %s
temperature/speed normal" when it clears, from dmesg or journalctl."""

from __future__ import annotations

from pathlib import Path

from app.fans.read.kernlog import events
from tests.unit.test_fan_readers import explain, findings_of

DMESG = ("[ 4107.201122] CPU2: Core temperature above threshold, cpu clock throttled (total events = 3)\n"
         "[ 4107.202111] CPU2: Package temperature above threshold, cpu clock throttled (total events = 1)\n"
         "[ 4107.203156] CPU2: Core temperature/speed normal\n")
JOURNAL = ("Oct 29 19:16:03 host kernel: mce: CPU0: Package temperature above threshold, cpu clock throttled\n"
           "Oct 29 19:16:04 host kernel: mce: CPU0: Package temperature/speed normal\n")


def test_each_cpu_and_level_its_count_and_whether_it_cleared() -> None:
    assert [(e.cpu, e.level, e.count, e.ended) for e in events(DMESG)] == [
        ("CPU2", "Core", 3, True), ("CPU2", "Package", 1, False)]
    assert [(e.cpu, e.level, e.count, e.ended) for e in events(JOURNAL)] == [("CPU0", "Package", 1, True)]
    assert events("CPU0: Core temperature/speed normal\n") == ()  # cleared with nothing logged before: no event


def test_a_cpu_slowed_for_heat_is_the_cause(tmp_path: Path) -> None:
    """Such a log alone was refused; now the CPU's thermal limit leads, known, with what the log shows cleared."""
    code, answer = explain(DMESG, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("cpu-slowed", "known")
    assert (lead["facts"]["cpus"], lead["facts"]["levels"], lead["facts"]["events"], lead["facts"]["ended"]) == (
        "CPU2", "Core and Package", 3.0, "no")
    _, answer = explain(JOURNAL, tmp_path)
    assert findings_of(answer)[0]["facts"]["ended"] == "yes"
    assert str(answer["sentence"]).startswith(
        "The kernel logged CPU0 slowing its clock for heat (Package temperature above threshold, up to 1 event; it "
        "logged them back to normal after): the CPU reached its thermal limit")
