"""smartctl's drive temperatures (smartctl(8)'s attribute table, the NVMe health log, a SCSI drive's line): a paste
of them was refused, or read as junk ("SMART Attributes Data Structure revision number: 16" as a reading); each
drive's temperature is its own, the minimum and maximum beside the raw value and the limits are not readings."""

from __future__ import annotations

from app.fans import adapt
from app.fans.read import read

ATA = """$ sudo smartctl -A /dev/sda
=== START OF READ SMART DATA SECTION ===
SMART Attributes Data Structure revision number: 16
Vendor Specific SMART Attributes with Thresholds:
ID# ATTRIBUTE_NAME          FLAG     VALUE WORST THRESH TYPE      UPDATED  WHEN_FAILED RAW_VALUE
  1 Raw_Read_Error_Rate     0x002f   200   200   051    Pre-fail  Always       -       0
194 Temperature_Celsius     0x0022   106   092   000    Old_age   Always       -       44 (Min/Max 22/56)
"""
NVME = """$ sudo smartctl -a /dev/nvme0
SMART/Health Information (NVMe Log 0x02)
Critical Warning:                   0x00
Temperature:                        71 Celsius
Available Spare:                    100%
Warning  Comp. Temperature Time:    3
Temperature Sensor 2:               84 Celsius
"""
SCSI = "# smartctl -A /dev/sdb\n=== START OF READ SMART DATA SECTION ===\nCurrent Drive Temperature:     35 C\n" \
       "Drive Trip Temperature:        65 C\n"


def test_each_drives_temperature_is_read_as_its_own() -> None:
    readings, kind = read(ATA + NVME + SCSI)
    assert kind is not None and kind.startswith("smartctl")
    celsius = {r.label: r.value for r in readings}
    assert celsius == {"/dev/sda Temperature_Celsius": 44.0, "/dev/nvme0 Temperature": 71.0,
                       "/dev/nvme0 Temperature Sensor 2": 84.0, "/dev/sdb Current Drive Temperature": 35.0}
    machine = adapt.machine(readings)
    assert {t.role for t in machine.temperatures} == {"storage"}


def test_without_smartctls_words_the_labels_are_not_claimed() -> None:
    assert read("Temperature:  71 Celsius\n")[1] != "smartctl's drive temperatures (ATA attributes, the NVMe " \
        "health log, SCSI)"
