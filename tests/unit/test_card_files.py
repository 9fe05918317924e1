"""A graphics card's hwmon files ``cat``ed beside its ``sensors`` listing: amdgpu documents its hwmon interface under
``/sys/class/drm/cardN/device/hwmon/hwmonM/``, and ``pwm1`` (the duty, 0-255) and ``pwm1_enable`` are files
``sensors`` does not print. The pastes here are shaped on two real posts (their values are this test's): an HD 7750
whose fan1 reads 0 RPM while ``pwm1`` keeps changing (the driver's maintainer: the fan takes pwm but does not report
its speed), and an RX 6600 XT under FurMark, pwm1 112 with fan1 at 0 (read only as "no cooling while hot" before: its
duty was dropped)."""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from app.fans.read import cardfiles
from tests.unit.test_fan_readers import explain, findings_of

LISTING = ("$ sensors\namdgpu-pci-0100\nAdapter: PCI adapter\nvddgfx:      900.00 mV\n"
           "fan1:           0 RPM  (min =    0 RPM, max = 3000 RPM)\n"
           "edge:         +{edge}°C  (crit = +104000.0°C, hyst = -273.1°C)\npower1:       15.00 W  (cap = 55.00 W)\n")
CAT = "$ cat /sys/class/drm/{card}/device/hwmon/{hwmon}/{file}\n{value}\n"


def paste(*files: tuple[str, str], edge: str = "48.0", card: str = "card0") -> str:
    return LISTING.format(edge=edge) + "".join(CAT.format(card=card, hwmon="hwmon0", file=f, value=v)
                                               for f, v in files)


def fan(text: str) -> tuple[float | None, float | None]:
    (found,) = machine(read.read(text)[0]).fans
    return found.duty_percent, found.pwm_enable


def test_a_cards_pwm_beside_its_listing_is_its_duty(tmp_path: Path) -> None:
    """pwm1 74 (29 %) beside fan1 0 RPM at 48 °C: a duty with no speed (stalled, or a tachometer that does not
    report), never "at rest" as it was; the duty is in the fan table too (the named reader's tree)."""
    text = paste(("pwm1_enable", "2"), ("pwm1", "74"))
    assert fan(text) == (29.0, 2.0)
    code, answer = explain(text, tmp_path)
    kinds = [f["kind"] for f in findings_of(answer)]
    assert code == 0 and kinds[0] == "stalled" and "at-rest" not in kinds
    fans = answer["fans"]
    assert isinstance(fans, list) and fans[0]["percent"] == 29.0


def test_a_file_read_twice_is_read_by_its_first_value(tmp_path: Path) -> None:
    """Under load pwm1 112, then at idle 0 (one post): the value nearest the listing is the first; with it, the fan
    at 0 RPM under a hot junction is driven and not turning, not asked to rest."""
    text = paste(("pwm1", "112"), ("pwm1", "0"), edge="82.0")
    assert fan(text)[0] == 43.9
    code, answer = explain(text, tmp_path)
    lead = findings_of(answer)[0]
    assert code == 0 and lead["kind"] == "hot-not-cooled" and lead["facts"]["duty"] == 43.9


def test_files_are_the_gpus_only_where_one_gpu_is_listed() -> None:
    """Two GPU chips in the listing (the card's number does not say which), or two cards' folders cat'ed: the files
    are read as no one's; a value that is no number is not read."""
    two = paste(("pwm1", "74")).replace("$ cat", "radeon-pci-0200\nAdapter: PCI adapter\n"
                                        "temp1:        +40.0°C  (crit = +120.0°C)\n$ cat", 1)
    assert fan(two.replace("radeon-pci-0200\nAdapter: PCI adapter\ntemp1:        +40.0°C  (crit = +120.0°C)\n", ""))[0]
    found = machine(read.read(two)[0]).fans
    assert all(f.duty_percent is None for f in found)
    assert cardfiles.files(paste(("pwm1", "74")) + CAT.format(card="card1", hwmon="hwmon3", file="pwm1",
                                                                value="90")) == []
    assert cardfiles.files(paste(("pwm1", "N/A"))) == []
