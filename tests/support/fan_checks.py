"""What must never be found on any machine, whatever its thread says: the fan wing's dangerous answers, checked
against the facts the capture itself gives (tests/unit/test_fan_wing.py, tests/unit/test_fan_readers.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.fans import read
from app.fans.adapt import machine
from app.fans.chips import chip
from app.fans.facts import Machine
from app.fans.roles import role
from app.fans.rules import HOT_C, not_turning, source_of

FAULTY = {"fan-fault", "fan-alarm", "fault-then-reading", "unlike-siblings", "stalled", "hot-not-cooled",
          "target-not-met", "pump-stopped", "speed-not-a-reading", "no-power", "detected-still"}


def assert_nothing_dangerous(capture: str, answer: dict[str, object]) -> None:
    """Never: a fan flagged, unreadable or stopped called at rest or fine; a rest warmer than its controller rests
    at; a placeholder as the hottest reading; an embedded controller's fans sent to a BMC; "no fault" beside a
    fault."""
    found = answer["findings"]
    assert isinstance(found, list)
    assert_nothing_dangerous_in(machine(read.read(capture)[0]), found)


def assert_nothing_dangerous_in(facts: Machine, found: Sequence[Mapping[str, Any]]) -> None:
    """``assert_nothing_dangerous`` on a machine's facts and its findings (as the JSON answer gives them), for a live
    machine as for a paste's."""
    # a few RPM with no duty asked is a counter's noise, and a chip's documented no-pulse count (amdgpu's 65535) at
    # 0 % duty a stopped counter: neither is a doubt there; under a duty both are
    doubtful = {f.key for f in facts.fans if f.fault or f.alarm or
                (f.invalid and not (f.invalid == "too-slow" and f.duty_percent in (0, None)) and
                 not (f.invalid == "no-pulses" and f.duty_percent == 0)) or
                "FAULT" in (s.upper() for s in f.speeds)}
    bad_temps = {t.key for t in facts.temperatures if t.invalid}
    # an embedded controller whose own fan table asks for cooling runs its fans (Chrome EC common/fan.c): not a rest
    asked = {f.key for f in facts.fans if (f.table_percent or 0.0) > 0 and f.duty_percent is None}
    for finding in found:
        subjects = set(finding["subjects"])
        if finding["kind"] in ("at-rest", "no-fault", "turning"):
            assert not subjects & doubtful if finding["kind"] != "turning" else \
                finding["subjects"][0] not in doubtful, finding
        if finding["kind"] == "at-rest":
            assert finding["facts"]["source_c"] < finding["facts"]["below_c"], finding
            assert not subjects & asked, finding
        if finding["kind"] == "headers-read-zero" and finding["facts"].get("board") == "yes":
            assert all(chip(s.partition("/")[0]).kind != "ec" for s in subjects), finding
        if finding["kind"] == "hottest":
            assert not subjects & bad_temps, finding
    kinds = {f["kind"] for f in found}
    assert not (FAULTY & kinds and "no-fault" in kinds), kinds
    for fan in facts.fans:  # a hot part whose fan does not turn is said, whatever else is
        source = source_of(facts, fan)
        named = role(None, fan.label) not in ("unknown", "board")
        if not_turning(fan) and (chip(fan.chip).zero != "empty" or named) and source is not None and \
                (source.celsius or 0.0) >= HOT_C:
            assert any(f["kind"] == "hot-not-cooled" and fan.key in f["subjects"] for f in found), (fan, kinds)
            assert not any(f["kind"] == "empty-slots" and fan.key in f["subjects"] for f in found), (fan, kinds)


def nvidia_smi_table(row: str) -> str:
    """nvidia-smi's table for one GeForce (driver 535's layout), its card row given: "| 40%   32C    P8    12W /
    120W |      2MiB /  6144MiB |      0%      Default |"."""
    return ("+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 535.161.07   Driver Version: 535.161.07   CUDA Version: 12.2     |\n"
            "|-------------------------------+----------------------+----------------------+\n"
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
            "|===============================+======================+======================|\n"
            "|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |                  N/A |\n"
            f"{row}\n"
            "+-------------------------------+----------------------+----------------------+\n")
