"""A shell session of ``cat`` of hwmon files (app.collect.capture_tree.cat_session) as people paste it: each file's
value is the line its own command printed, wherever other commands (a ``tee``'s echo, its error) print between them;
where the commands come first and their output after the last of them, the values go in the commands' order."""

from __future__ import annotations

from pathlib import Path

from app.collect.capture_tree import Chips, cat_session


def tree(text: str, tmp_path: Path) -> dict[str, str]:
    """Every file the session wrote, as "hwmonN/file": value."""
    chips = Chips(tmp_path)
    assert cat_session(text, chips) == "cat of hwmon files"
    chips.flush()
    return {f"{f.parent.name}/{f.name}": f.read_text().strip() for f in sorted(tmp_path.rglob("*")) if f.is_file()}


def test_each_file_takes_what_its_own_cat_printed_not_a_tee_s_echo(tmp_path: Path) -> None:
    """A maintainer's session on a Radeon Pro W7900 (ROCm/amdgpu#162): pwm1_enable read, set to 1 with tee (which
    echoes "1"), read, set back to 2, read. Read in order the echoes took the reads' places (the last read came out 1,
    not 2); a fan's speed and a temperature read after a refused write take their own values, not the echo's 255 or
    the error line."""
    session = ("$ cat /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable\n2\n"
               "$ echo 1 | sudo tee /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable\n1\n"
               "$ cat /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable\n1\n"
               "$ echo 2 | sudo tee /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable\n2\n"
               "$ cat /sys/class/drm/card0/device/hwmon/hwmon2/pwm1_enable\n2\n")
    assert tree(session, tmp_path)["hwmon100/pwm1_enable"] == "2"
    refused = ("$ echo 255 | sudo tee /sys/class/hwmon/hwmon3/pwm1\n255\ntee: /sys/class/hwmon/hwmon3/pwm1: Invalid "
               "argument\n$ cat /sys/class/hwmon/hwmon3/fan1_input\n0\n$ cat /sys/class/hwmon/hwmon3/temp2_input\n"
               "58000\n")
    assert tree(refused, tmp_path / "refused") == {"hwmon3/fan1_input": "0", "hwmon3/temp2_input": "58000"}


def test_a_report_s_command_and_output_captions_are_not_values(tmp_path: Path) -> None:
    """A bug report laid out as "Command:", the command, "Output:", the value (an RX 7900 XT's, ublue-os/bazzite#5305):
    each file's value, not the caption; pwm1 40 of 255 was read as pwm1_enable's 2 before."""
    report = "".join(f"Command:\n\ncat /sys/class/hwmon/hwmon2/{file}\n\nOutput:\n\n{value}\n\n\n"
                     for file, value in (("pwm1_enable", "2"), ("pwm1", "40"), ("pwm1_min", "0"), ("pwm1_max", "255")))
    assert tree(report, tmp_path) == {"hwmon2/pwm1_enable": "2", "hwmon2/pwm1": "40", "hwmon2/pwm1_min": "0",
                                      "hwmon2/pwm1_max": "255"}


def test_commands_typed_first_and_their_output_after_them_keep_their_order(tmp_path: Path) -> None:
    """A Gigabyte board's session as posted (frankcrawford/it87#115): the cat commands, then all their output after
    the last of them (an ``ls -l`` between, its listing left out)."""
    batch = ("cat /sys/class/hwmon/hwmon3/name\nls -l /sys/class/hwmon/hwmon3/fan*_input\n"
             "cat /sys/class/hwmon/hwmon3/fan1_input\ncat /sys/class/hwmon/hwmon3/fan2_input\n\nit8689\n"
             "-r--r--r-- 1 root root 4096 Jun 29 23:34 /sys/class/hwmon/hwmon3/fan1_input\n1247\n1406\n")
    assert tree(batch, tmp_path) == {"hwmon3/name": "it8689", "hwmon3/fan1_input": "1247", "hwmon3/fan2_input": "1406"}


def test_a_session_pasted_twice_reads_as_once(tmp_path: Path) -> None:
    """Two drivers' fan inputs globbed under echoed headers (an MSI board read by nct6687 and nct6683,
    Fred78290/nct6687d#158), the session pasted twice: the same fans as once, not each header's values run on as
    more fans (and each glob read once: a long repetition wrote every value of every run for every command)."""
    session = ('❯ echo "=== nct6687 ==="\ncat /sys/class/hwmon/hwmon4/fan*_input 2>/dev/null\n\n'
               'echo "=== nct6683 ==="\ncat /sys/class/hwmon/hwmon3/fan*_input 2>/dev/null\n'
               "=== nct6687 ===\n642\n617\n0\n=== nct6683 ===\n0\n642\n617\n1242\n")
    once = tree(session, tmp_path / "once")
    assert once["hwmon4/fan2_input"] == "617" and once["hwmon3/fan4_input"] == "1242" and len(once) == 9
    assert tree(session + "\n" + session, tmp_path / "twice") == once
