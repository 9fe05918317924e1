"""The words of what could read the fans and did not: a board's fan chip whose ports the firmware claims, and the
chips a probe found (sensors-detect's summary, sensors' "No sensors found!") where no reading of a fan is pasted
(``app.fans.words`` registers each as the template of its finding kind)."""

from __future__ import annotations

from collections.abc import Sequence

from .names import Names
from .wording import Facts


def chip_claimed(n: Names, s: Sequence[str], f: Facts) -> str:
    return (f"The board's fan chip ({f['chip']}, found by {f['driver']} at {f['address']}) is not read: the firmware's "
            f"ACPI claims its ports ({f['region']}), and the kernel keeps a driver from ports its firmware uses ("
            + ("the driver's probe failed busy" if f["probe"] == "busy" else "acpi_enforce_resources=strict, the "
               "default") + "), so the board's fans run as the BIOS set them up, unread. A driver that asks the "
            "firmware instead reads them where one fits the board (asus_wmi_sensors, asus_ec_sensors, gigabyte_wmi; "
            "nct6775 itself goes through ASUS's WMI on the boards it lists, Linux 5.16 and later); "
            "acpi_enforce_resources=lax lets the driver in, at the risk the kernel warns of (the firmware and the "
            "driver using the chip at once).")


def chips_probed(n: Names, s: Sequence[str], f: Facts) -> str:
    """The chips a probe found and what reads the fans among them; or that it found none."""
    unread = "no reading of the fans is in this paste, so what they do cannot be seen here"
    if f["tool"] == "sensors":
        return ("sensors found no sensor chip (\"No sensors found!\"): no hardware-monitoring driver is loaded, so "
                f"Linux reads no fan; {unread}. sensors-detect names the drivers a machine needs.")
    if not f["found"]:
        return ("sensors-detect found no hardware-monitoring chip: the fans are run by the firmware (on a laptop its "
                "embedded controller, through ACPI, as sensors-detect itself says), a BMC, or a chip it does not "
                f"know, and Linux reads none of them; {unread}. A vendor's driver may read a laptop's fans "
                "(thinkpad_acpi, dell-smm-hwmon, asus-wmi, hp-wmi-sensors).")
    said = f"sensors-detect found {f['found']}"
    if f["unwritten"]:
        said += f"; no driver reads {f['unwritten']} yet (\"to-be-written\")"
    if f["fan_chips"]:
        return (f"{said}: {f['fan_chips']} reads and drives the fans, but {unread}: load it (modprobe "
                f"{str(f['fan_chips']).split(', ')[0]}) and paste sensors' output.")
    return (f"{said}, and no chip among them drives fans that Linux can read: the fans are run by the firmware (the "
            f"BIOS, an embedded controller or a BMC) or by a chip without a driver; {unread}.")
