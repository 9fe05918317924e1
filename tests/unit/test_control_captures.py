"""What a capture shows was done to a fan's control (app.collect.control_captures) is read only where the capture
shows it: each note beside the near miss that must not make one. The corpus (tests/unit/test_corpus.py) checks the
sentences on the real machines; these check that a note is never invented."""

from __future__ import annotations

import typing

import pytest

from app.collect.control_captures import read
from app.core.fan import NoteKind
from app.core.snapshot import Snapshot
from app.verdict.notes import _WORDS, note_words
from tests.support.builders import gpu, snap

CURVE = """OD_FAN_CURVE:
0: 0C 0%
OD_RANGE:
FAN_CURVE(hotspot temp): 25C 100C
FAN_CURVE(fan speed): 20% 100%
"""


def kinds(text: str) -> list[str]:
    return [n.kind for n in read(text)]


def test_every_note_kind_has_its_words() -> None:
    assert sorted(_WORDS) == sorted(typing.get_args(NoteKind))


def test_a_refused_curve_needs_the_refusal_and_a_point_outside_the_range() -> None:
    refused = CURVE + "0 50 15\ntee: fan_curve: Invalid argument\n"
    (note,) = read(refused)
    assert note.kind == "curve-refused" and note.facts["asked"] == 15 and note.facts["low"] == 20
    assert kinds(CURVE) == []  # the range alone: nothing was written
    assert kinds(CURVE + "0 50 40\ntee: fan_curve: Invalid argument\n") == []  # refused for another reason
    locked = CURVE.replace("20% 100%", "0% 0%") + "0 50 40\ntee: fan_curve: Invalid argument\n"
    assert kinds(locked) == ["curve-locked"]


@pytest.mark.parametrize(("second", "expected"), [
    (("100", "1192", "20", "1188"), ["duty-ignored"]),  # the duties swapped, the speeds stayed
    (("100", "1950", "20", "610"), []),  # the speeds followed
])
def test_a_duty_the_speed_did_not_follow_needs_two_listings_that_show_it(second: tuple[str, ...],
                                                                          expected: list[str]) -> None:
    duty1, rpm1, duty2, rpm2 = second
    text = ("$ liquidctl status\nCorsair Hydro H100i Pro XT\n├── Fan 1 speed   1192  rpm\n├── Fan 1 duty   20  %\n"
            "├── Fan 2 speed   1187  rpm\n└── Fan 2 duty   100  %\n"
            f"$ liquidctl status\nCorsair Hydro H100i Pro XT\n├── Fan 1 speed   {rpm1}  rpm\n"
            f"├── Fan 1 duty   {duty1}  %\n├── Fan 2 speed   {rpm2}  rpm\n└── Fan 2 duty   {duty2}  %\n")
    assert kinds(text) == expected
    first_only = text.split("$ liquidctl status")[1]
    assert kinds(first_only) == []


def test_liquidctl_commands_a_failure_and_a_single_duty() -> None:
    assert kinds("liquidctl set fans speed 50\nERROR: Corsair Commander ST (broken): unspecified liquidctl error\n") \
        == ["set-failed"]
    assert kinds("liquidctl --match 690LC set pump speed 20\n") == ["asked-duty"]
    assert kinds("liquidctl set fan speed 25 35  30 45  35 60  40 70  45 80\n") == []  # the fan wing's curve
    assert kinds("liquidctl set fan speed 25 35 30\n") == []  # an odd count is not (°C, %) pairs
    assert kinds("ERROR: something else entirely\n") == []  # an error that is not liquidctl's


def test_an_ec_that_lost_its_cpu_reading_and_one_that_did_not() -> None:
    assert kinds("17:45:35 FAN_STUCK pkg=95C ec=0C fan=0rpm\n") == ["ec-lost-cpu"]
    assert kinds("17:45:35 OK pkg=55C ec=54C fan=2100rpm\n") == []
    assert kinds("peci_get_temp: hardware error: 0x0A\n") == ["ec-lost-cpu"]


def test_i8kutils_minus_one_and_a_gigabyte_board_with_writes() -> None:
    assert kinds("/proc/i8k format version:\t1.0\nright fan status:\t\t-1\n") == ["tool-cannot-reach"]
    assert kinds("/proc/i8k format version:\t1.0\nright fan status:\t\t1\n") == []
    assert kinds("it87: Found IT8689E chip at 0xa40\necho 255 > pwm2          # fan2 still ~1040 RPM\n") \
        == ["board-keeps-fans"]
    assert kinds("it87: Found IT8689E chip at 0xa40\n") == []  # the chip alone: nothing was written
    assert kinds("nct6798: echo 255 > pwm2\n") == []  # writes on another chip


def _snap(percent: float) -> Snapshot:
    return snap([gpu(fan=percent)])


def test_a_daemon_log_is_said_only_where_the_card_does_not_follow_it() -> None:
    notes = read("2025/01/23 11:25:04 Updated GPU 0: Temp=41°C, Fan Speed=40%\n"
                 "2025/01/23 11:29:04 Updated GPU 0: Temp=40°C, Fan Speed=30%\n")
    assert [n.kind for n in notes] == ["daemon-not-obeyed"]
    (said,) = note_words(notes, _snap(49.0))
    assert "40 % and then 30 %" in said and "reads 49 %" in said
    assert note_words(notes, _snap(31.0)) == []  # the card follows it: nothing to say


def test_nvidia_settings_refusing_a_fan_write_is_a_note_and_an_assignment_is_not() -> None:
    """nvidia-settings(1) prints "Error assigning value 1 to attribute 'GPUFanControlState'" when it cannot take the
    fan (the NVIDIA X driver's README: manual fan control needs Coolbits' value 4): a note that the card stays on
    its own curve; a write it took ("assigned value 1") makes none."""
    refused = ("ERROR: Error assigning value 1 to attribute 'GPUFanControlState' (desk:0[gpu:0]) as specified in "
               "assignment '[gpu:0]/GPUFanControlState=1' (Unknown Error).\n"
               "ERROR: Error assigning value 80 to attribute 'GPUTargetFanSpeed' (desk:0[fan:0]) as specified in "
               "assignment '[fan:0]/GPUTargetFanSpeed=80' (Unknown Error).\n")
    (note,) = read(refused)
    assert note.kind == "control-refused" and note.facts["attribute"] == "GPUFanControlState"
    assert "stays on the card's own curve" in note_words([note], snap([]))[0]
    assert kinds("  Attribute 'GPUFanControlState' (desk:0[gpu:0]) assigned value 1.\n") == []
    (speed,) = read(refused.splitlines()[1])
    assert (speed.facts["attribute"], speed.facts["value"]) == ("GPUTargetFanSpeed", 80)
    assert "not under manual control, so it stays on" not in note_words([speed], snap([]))[0]  # control not refused


def test_nvidia_settings_with_no_x_display_set_nothing() -> None:
    """nvidia-settings with a fan assignment on its command line and no X server ("ERROR: The control display is
    undefined"): nothing was set, the card stays on its own curve; the same error with no fan assignment (a query)
    makes no note."""
    headless = ('$ nvidia-settings -a "[gpu:0]/GPUFanControlState=1" -a "[fan:0]/GPUTargetFanSpeed=70"\n'
                "Unable to init server: Could not connect: Connection refused\n\nERROR: The control display is "
                "undefined; please run `nvidia-settings --help` for usage information.\n")
    (note,) = read(headless)
    assert (note.kind, note.facts["attribute"]) == ("control-refused", "display")
    assert "stays on its own curve" in note_words([note], snap([]))[0]
    assert kinds("$ nvidia-settings -q GPUCoreTemp\nERROR: The control display is undefined; please run "
                 "`nvidia-settings --help` for usage information.\n") == []


def test_a_write_to_a_fan_file_the_kernel_refused_is_a_note() -> None:
    """A write to pwmN, pwmN_enable or fanN_target followed by the shell's or tee's error (on its line or the next):
    a note with the file and the error, said as nothing changed; a write with no error makes none, and an error
    about another file (a fan curve's, which amdgpu's note reads) makes no write note."""
    shell = "$ echo 1 | sudo tee /sys/class/hwmon/hwmon3/pwm1_enable\ntee: /sys/class/hwmon/hwmon3/pwm1_enable: {}\n"
    (note,) = read(shell.format("Invalid argument"))
    assert (note.kind, note.facts["file"], note.facts["error"]) == ("write-refused", "pwm1_enable", "Invalid argument")
    assert "refused (Invalid argument)" in note_words([note], snap([]))[0]
    (note,) = read("# echo 255 > /sys/class/hwmon/hwmon2/pwm2\nbash: echo: write error: Permission denied\n")
    assert (note.facts["file"], note.facts["error"]) == ("pwm2", "Permission denied")
    assert kinds("$ echo 1 > /sys/class/hwmon/hwmon3/pwm1_enable\n$ cat /sys/class/hwmon/hwmon3/pwm1_enable\n1\n") == []
    assert "write-refused" not in kinds("echo 's 0 50 20' > /sys/class/drm/card0/device/gpu_od/fan_ctrl/fan_curve\n"
                                        "bash: echo: write error: Invalid argument\n")


def test_a_refused_pwm_write_as_programs_and_the_kernel_tell_it() -> None:
    """CoolerControl's "Unable to set PWM value N for <file> Reason: <error>" (its reason a few lines down where a
    post wrapped it), the file nearest before the error (not a file only read before it), Read-only file system
    (hwmon mounted read-only in a container), and amdgpu's own account in the kernel's log (amdgpu_pm.c: EINVAL and
    "manual fan speed control should be enabled first" while pwm1_enable is not 1); amdgpu is named only where the
    text names it."""
    wrapped = ("Error on amdgpu:fan1 for duty 27\n\nUnable to set PWM value 69 for /sys/class/hwmon/hwmon2/pwm1\n\n"
               "Reason:\nInvalid argument (os error 22)\n")
    (note,) = read(wrapped)
    assert (note.facts["file"], note.facts["error"], note.facts["driver"]) == ("pwm1", "Invalid argument", "amdgpu")
    said = note_words([note], snap([]))[0]
    assert "either pwm1_enable was not 1 (write 1 to it first) or the card's firmware" in said
    nearest = ("$ cat /sys/class/hwmon/hwmon2/pwm1_enable\n2\n$ echo 128 | sudo tee /sys/class/hwmon/hwmon2/pwm1\n"
               "tee: /sys/class/hwmon/hwmon2/pwm1: Invalid argument\n")
    (note,) = read(nearest)
    assert note.facts["file"] == "pwm1" and "driver" not in note.facts
    assert "amdgpu" not in note_words([note], snap([]))[0]
    (note,) = read("Unable to set PWM value 102 for \"/sys/class/hwmon/hwmon4/pwm3\" Reason: Read-only file system "
                   "(os error 30)\n")
    assert (note.facts["file"], note.facts["error"]) == ("pwm3", "Read-only file system")
    assert "/sys is read-only where it was written" in note_words([note], snap([]))[0]
    (note,) = read("[ 812.301] amdgpu 0000:03:00.0: amdgpu: manual fan speed control should be enabled first\n")
    assert (note.facts["file"], note.facts["error"]) == ("pwm1", "manual fan speed control should be enabled first")
    assert note_words([note], snap([]))[0].startswith("amdgpu refused a write to pwm1: amdgpu takes a pwm1 only under "
                                                      "manual control (pwm1_enable 1)")


AMDGPU_FAN = """starting amdgpu-fan
OSError: [Errno 22] Invalid argument

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/usr/local/bin/amdgpu-fan", line 8, in <module>
    sys.exit(main())
  File "/usr/local/lib/python3.8/dist-packages/amdgpu_fan/controller.py", line 78, in main
    FanController(config).main()
  File "/usr/local/lib/python3.8/dist-packages/amdgpu_fan/controller.py", line 37, in main
    card.set_fan_speed(speed)
  File "/usr/local/lib/python3.8/dist-packages/amdgpu_fan/lib/amdgpu.py", line 77, in set_fan_speed
    return self.write_endpoint('pwm1', int(speed))
  File "/usr/local/lib/python3.8/dist-packages/amdgpu_fan/lib/amdgpu.py", line 42, in write_endpoint
    return e.write(str(data))
OSError: [Errno 22] Invalid argument
"""


def test_a_program_s_traceback_ending_in_the_kernel_s_refusal_is_a_refused_write() -> None:
    """amdgpu-fan's traceback as posted (chestm007/amdgpu-fan#19): the last frame that names a fan file wrote pwm1,
    and the kernel refused it (EINVAL): a refused write to amdgpu's pwm1, said with amdgpu's two causes (pwm1_enable
    not 1, or the card's firmware not taking manual control: amdgpu_pm.c's set_pwm1 asks the firmware for the mode).
    A traceback for a file the program found missing (KeyError, amdgpu-fan#41 on an RX 9070 XT: no pwm1_enable at
    all) or for a read of fan1_input is no write."""
    (note,) = read(AMDGPU_FAN)
    assert (note.kind, note.facts["file"], note.facts["error"], note.facts["driver"]) == \
        ("write-refused", "pwm1", "Invalid argument", "amdgpu")
    assert "enable" not in note.facts
    said = note_words([note], snap([]))[0]
    assert "either pwm1_enable was not 1" in said and "nothing changed" in said
    missing = ("Traceback (most recent call last):\n"
               "  File \"/usr/lib/python3.13/site-packages/amdgpu_fan/lib/amdgpu.py\", line 67, "
               "in set_system_controlled_fan\n"
               "    self.write_endpoint('pwm1_enable', 0 if state else 1)\n"
               "  File \"/usr/lib/python3.13/site-packages/amdgpu_fan/lib/amdgpu.py\", line 41, in write_endpoint\n"
               "    with open(self._endpoints[endpoint], 'w') as e:\nKeyError: 'pwm1_enable'\n")
    assert kinds(missing) == []
    read_fan = ("Traceback (most recent call last):\n  File \"amdgpu.py\", line 50, in fan_speed\n"
                "    return int(self.read_endpoint('fan1_input'))\n  File \"amdgpu.py\", line 37, in read_endpoint\n"
                "    return e.read()\nOSError: [Errno 22] Invalid argument\n")
    assert kinds(read_fan) == []


def test_a_duty_refused_after_manual_control_was_written_is_the_firmware_s_refusal() -> None:
    """pwm1_enable 1 written without an error, then pwm1 refused on an amdgpu card (the RDNA3 reports: the driver
    asks the card's firmware for the mode, and a pwm1 is refused unless it reads manual): said as the firmware not
    taking manual control, not as "write 1 to pwm1_enable first"; where that enabling write was itself refused, or
    none is in the paste, both causes stand."""
    enable = "$ echo 1 | sudo tee /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable\n1\n"
    duty = ("$ echo 255 | sudo tee /sys/class/drm/card0/device/hwmon/hwmon2/pwm1\n255\n"
            "tee: /sys/class/drm/card0/device/hwmon/hwmon2/pwm1: Invalid argument\n")
    (note,) = read(enable + duty)
    assert (note.facts["file"], note.facts["enable"]) == ("pwm1", "taken")
    said = note_words([note], snap([]))[0]
    assert "the card's firmware did not take manual control" in said and "write 1 to it first" not in said
    refused_enable = enable + "tee: /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable: Invalid argument\n"
    pwm1 = [n for n in read(refused_enable + duty) if n.facts["file"] == "pwm1"]
    assert len(pwm1) == 1 and "enable" not in pwm1[0].facts
    (alone,) = read(duty)
    assert "enable" not in alone.facts and "write 1 to it first" in note_words([alone], snap([]))[0]


def test_amdgpu_is_named_for_a_refused_write_only_where_that_write_is_amdgpus() -> None:
    """A paste with an amdgpu card's listing and, elsewhere, a refused write to a board chip's pwm1: amdgpu's rule is
    not said of that write; a write under a DRM card's path is amdgpu's wherever the paste names it."""
    listing = "amdgpu-pci-0300\nAdapter: PCI adapter\nedge:         +39.0°C\n\nnct6798-isa-0290\nfan1: 900 RPM\n\n\n\n"
    board = listing + "# echo 100 > /sys/class/hwmon/hwmon3/pwm1\nbash: echo: write error: Invalid argument\n"
    (note,) = read(board)
    assert note.facts["file"] == "pwm1" and "driver" not in note.facts
    assert "amdgpu" not in note_words([note], snap([]))[0]
    card = "# echo 100 > /sys/class/drm/card0/device/hwmon/hwmon2/pwm1\nbash: echo: write error: Invalid argument\n"
    (note,) = read(card)
    assert note.facts["driver"] == "amdgpu"


HDDFANCONTROL = ("WARNING [Fan #1] /run/hddfancontrol_fan_hwmon/pwm2_enable was 2, setting it to 1\n"
                 "root@serverino ~# echo 120 >  /run/hddfancontrol_fan_hwmon/pwm2\n"
                 "Error while writing to stdout\n"
                 "write_loop: Device or resource busy\n"
                 "root@serverino ~# echo 1 >  /run/hddfancontrol_fan_hwmon/pwm2_enable \n"
                 "root@serverino ~# echo 120 >  /run/hddfancontrol_fan_hwmon/pwm2\n"
                 "root@serverino ~# \n")


def test_a_refused_duty_on_a_channel_in_automatic_mode_and_the_write_taken_after() -> None:
    """A real session (hddfancontrol's tracker, desbma/hddfancontrol#17: after a resume the kernel had put
    pwm2_enable back to 2): a duty written while the channel is in an automatic mode is refused with EBUSY (it87.c's
    set_pwm: in automatic mode the duty register is read-only), through hddfancontrol's link to the hwmon folder; set
    to manual, the same write is taken. The note names the refused file (not the pwm2_enable named above it), the
    reason, and that a later write was taken, never "nothing changed"; without the later write, nothing changed."""
    (note,) = read(HDDFANCONTROL)
    assert (note.kind, note.facts["file"], note.facts["error"], note.facts.get("later")) == \
        ("write-refused", "pwm2", "Device or resource busy", "taken")
    said = note_words([note], snap([]))[0]
    assert "automatic mode" in said and "a later write to it was taken" in said and "nothing changed" not in said
    (alone,) = read("".join(HDDFANCONTROL.splitlines(keepends=True)[:4]))
    assert "later" not in alone.facts and "nothing changed" in note_words([alone], snap([]))[0]
    again = HDDFANCONTROL + "root@serverino ~# echo 130 >  /run/hddfancontrol_fan_hwmon/pwm2\n" \
        "write_loop: Device or resource busy\n"
    assert "later" not in read(again)[0].facts  # the last write was refused again: that is where it ended


COOLERCONTROL_READ_ONLY = "".join(
    f"May 10 22:52:24 bazzite coolercontrold[2218]: PWM fan at /sys/class/hwmon/hwmon2/pwm{n} is NOT writable - Fan "
    "control is not currently supported by the installed driver.\n" for n in (7, 5, 3, 1, 8, 6, 4, 2))


def test_pwm_files_a_fan_program_found_read_only_are_one_note() -> None:
    """CoolerControl's journal on a board whose chip's driver lists its pwm files read-only (a real one,
    ublue-os/bazzite#4776: the out-of-tree nct6687 gone from a new kernel, the in-tree driver left): software cannot
    set them, so the fans stay under the chip's own control. One note for the eight files, never "the write was
    refused" (nothing was written)."""
    (note,) = read(COOLERCONTROL_READ_ONLY)
    assert (note.kind, note.facts["error"], note.facts["count"]) == ("write-refused", "not writable", 8)
    assert note.facts["file"] == "pwm1, pwm2, pwm3, pwm4, pwm5, pwm6, pwm7 and pwm8"
    said = note_words([note], snap([]))[0]
    assert "read-only" in said and "chip's own control" in said and "was refused" not in said
    (one,) = read(COOLERCONTROL_READ_ONLY.splitlines(keepends=True)[0])
    assert one.facts["file"] == "pwm7" and " set it " in note_words([one], snap([]))[0]
