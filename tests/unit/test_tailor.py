"""tuxedo-rs' tailor_hwcaps: a TUXEDO laptop's fans as its embedded controller answers tuxedo_io. HWCAPS is a real
output posted to tuxedo-rs' issue tracker (a Book XA15, clevo_acpi); the error line is tailor_hwcaps' own form for a
fan the EC does not have (its main.rs: print_err of the failed read)."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from tests.unit.test_fan_readers import explain

HWCAPS = ('[OK]    Module version: "0.3.9"\n[OK]    Device interface ID: "clevo_acpi"\n[ERR]   Model ID: NotAvailable\n'
          '[OK]    Number of fans: 2\n[OK]    Fan temperatures [°C]: [79, 59]\n[OK]    Fan speeds [%]: [46, 45]\n'
          '[OK]    Fan min speed [%]: 20\n[OK]    Webcam enabled: true\n')


def test_each_fan_is_the_ecs_with_its_duty_floor_and_temperature() -> None:
    readings, kind = read.read(HWCAPS)
    assert kind == "tuxedo-rs' tailor_hwcaps (a TUXEDO laptop's embedded controller)"
    fans = {f.label: (f.duty_percent, f.floor_percent, f.controller) for f in machine(readings).fans}
    assert fans == {"fan1": (46.0, 20.0, "ec"), "fan2": (45.0, 20.0, "ec")}
    assert {t.label: t.celsius for t in machine(readings).temperatures} == {"fan1 temperature": 79.0,
                                                                             "fan2 temperature": 59.0}


def test_an_unread_list_is_no_reading(tmp_path: Path) -> None:
    failed = HWCAPS.replace("[OK]    Fan temperatures [°C]: [79, 59]", "[ERR]   Fan temperatures [°C]: DevNotAvailable")
    assert {r.label for r in read.read(failed)[0]} == {"fan1", "fan2"}
    code, _ = explain('[OK]    Number of fans: 2\n[ERR]   Fan temperatures [°C]: DevNotAvailable\n', tmp_path)
    assert code == 2  # nothing read: a refusal, not a fan
