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
    assert [(e.part, e.level, e.count, e.ended) for e in events(DMESG)] == [
        ("CPU2", "Core", 3, True), ("CPU2", "Package", 1, False)]
    assert [(e.part, e.level, e.count, e.ended) for e in events(JOURNAL)] == [("CPU0", "Package", 1, True)]
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


NOUVEAU = ("[ 5234.100000] nouveau 0000:01:00.0: therm: temperature (102 C) hit the 'fanboost' threshold\n"
           "[ 5240.100000] nouveau 0000:01:00.0: therm: temperature (107 C) hit the 'downclock' threshold\n")


def test_nouveau_at_its_heat_thresholds(tmp_path: Path) -> None:
    """nouveau's therm (nvkm_therm_sensor_event) logs "temperature (%i C) hit the '%s' threshold" rising and "went
    below" falling; at fanboost the driver sets the fan to 100 %. Such a log was refused; now the hottest threshold
    reached leads, known, with the fanboost that set the fan to full, and whether the log shows it passed."""
    assert [(e.part, e.level, e.ended, e.celsius, e.source) for e in events(NOUVEAU)] == [
        ("0000:01:00.0", "fanboost", False, 102.0, "nouveau"), ("0000:01:00.0", "downclock", False, 107.0, "nouveau")]
    code, answer = explain(NOUVEAU, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and (lead["kind"], lead["confidence"]) == ("gpu-threshold", "known")
    assert (lead["facts"]["threshold"], lead["facts"]["celsius"], lead["facts"]["fanboost_c"], lead["facts"]["ended"]) \
        == ("downclock", 107.0, 102.0, "no")
    assert "cpu-slowed" not in {f["kind"] for f in findings_of(answer)}  # a GPU's driver is no CPU's log
    boost = NOUVEAU.splitlines()[0] + "\n[ 5300.0] nouveau 0000:01:00.0: therm: temperature (96 C) went below the " \
        "'fanboost' threshold\n"
    _, answer = explain(boost, tmp_path)
    lead = findings_of(answer)[0]
    assert (lead["facts"]["threshold"], lead["facts"]["ended"]) == ("fanboost", "yes")
    assert "set the card's fan to full speed (100 %)" in str(answer["sentence"])
    assert not events("nouveau 0000:01:00.0: therm: programmed thresholds [ 90(3), 95(3), 105(5), 135(5) ]\n")
