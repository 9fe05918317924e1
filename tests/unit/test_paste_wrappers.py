"""What a forum or an issue tracker wraps around a paste is not part of it: each of the 72 corpus captures, wrapped as
people post them (a Markdown fence, a folded <details> section with a prompt line, a reply's quote marks, a Markdown
code block's four-space indent (or a tab, its blank lines left empty), each line set as inline code, HTML's &deg;
and <br>, Windows' line ends, trailing spaces, a blank line after every line, a root prompt around it, a sentence
before and after, a ° lost to "?" or dropped, UTF-8 read as Windows' code page 1252 and written again, a byte-order
mark, a terminal's colour codes, the line numbers of cat -n), gives the same findings as bare; so does the capture
saved as UTF-16, as Windows PowerShell 5 writes a command's output. Before app.collect.pasted, a fence line was read
as a second GPU's row, an indent hid the nvidia- smi table and the thinkfan log, and &deg; dropped every
temperature."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from app.cli.replay import run
from app.collect.liquidctl import parse
from app.collect.pasted import cleaned
from app.fans import read
from app.fans.adapt import machine
from tests.support.corpus import every_block
from tests.unit.test_fan_readers import explain

WRAPPERS: dict[str, Callable[[str], str]] = {
    "fence": lambda t: f"```\n{t}\n```\n",
    "details": lambda t: f"<details><summary>sensors</summary>\n\n```console\n$ cat out.txt\n{t}\n```\n</details>\n",
    "quote": lambda t: "".join(f"> {line}\n" for line in t.splitlines()),
    "indent": lambda t: "".join(f"    {line}\n" for line in t.splitlines()),
    # an editor's indent of the whole paste: its blank lines left empty, so the block is several paragraphs, and a
    # tab in place of the four spaces
    "indent-blank-lines": lambda t: "".join(f"    {line}\n" if line else "\n" for line in t.splitlines()),
    "indent-tab": lambda t: "".join(f"\t{line}\n" if line else "\n" for line in t.splitlines()),
    "entity": lambda t: t.replace("°", "&deg;"),
    "crlf": lambda t: t.replace("\n", "\r\n"),
    "trailing": lambda t: "".join(f"{line}   \n" for line in t.splitlines()),
    "double-spaced": lambda t: t.replace("\n", "\n\n"),
    "prompt": lambda t: f"root@pve:~# cat capture\n{t}\nroot@pve:~# \n",
    "prose": lambda t: f"Here is the output, the fans are loud:\n\n{t}\n\nAny idea? Thanks!\n",
    "br": lambda t: "".join(f"{line}<br />\n" for line in t.splitlines()),
    "question-degrees": lambda t: t.replace("°", "?"),
    "no-degree-sign": lambda t: t.replace("°", ""),
    # what a Windows console or editor makes of UTF-8 (├── as â”œâ”€â”€, ° as Â°); the five bytes code page 1252 leaves
    # undefined pass through as the control characters of the same number
    "cp1252": lambda t: "".join(chr(b) if b in (0x81, 0x8D, 0x8F, 0x90, 0x9D) else bytes([b]).decode("cp1252")
                                for b in t.encode()),
    # each line set as Markdown's inline code, where a code block was meant (a line with a backtick of its own left)
    "inline-code": lambda t: "".join(f"`{line}`\n" if line.strip() and "`" not in line else f"{line}\n"
                                     for line in t.splitlines()),
    "bom": lambda t: "\ufeff" + t,  # Windows' Notepad saves UTF-8 with a byte-order mark
    # a page's invisible zero-width spaces after each colon; an editor's typographic quotes in a configuration
    # one host's output through pdsh or clush: the host's name before every line (of an output of three lines or
    # more: a lone "name: value" line is a reading's own label as likely as a host's)
    "pdsh": lambda t: "".join(f"gpu-node07: {line}\n" for line in t.splitlines()) if len(t.strip().splitlines()) >= 3
    else t,
    # a log collector's time before every line (docker logs -t, kubectl logs --timestamps, ts -s), three or more
    "stamped": lambda t: "".join(f"2026-03-01T10:00:{n % 60:02d}.123456789Z {line}\n"
                                 for n, line in enumerate(t.splitlines())) if len(t.strip().splitlines()) >= 3 else t,
    # sudo's password prompt above the output, and watch's header line (its interval, the command, host and time)
    "sudo": lambda t: "[sudo] password for alice: \n" + t,
    "watch": lambda t: "Every 2.0s: sensors                    gpu-box: Sun Dec  6 12:00:00 2026\n\n" + t,
    # a file shown with its line numbers, as `cat -n` prints them after the command
    "cat-n": lambda t: "$ cat -n capture.txt\n" + "".join(f"{n:6d}\t{line}\n"
                                                         for n, line in enumerate(t.splitlines(), 1)),
    "zero-width": lambda t: t.replace(":", ":\u200b"),
    "typographic-quotes": lambda t: re.sub(r'"([^"\n]*)"', "\u201c\\1\u201d", t),
    # a `script` log or a tool forced to colour: each line in a colour, a label in bold, a window title (OSC)
    "ansi": lambda t: "\x1b]0;root@host: ~\x07" + "".join(
        f"\x1b[1;32m{line}\x1b[0m\n" if n % 2 else
        (f"\x1b[1m{line.split(':', 1)[0]}\x1b[0m:{line.split(':', 1)[1]}\n" if ":" in line else f"{line}\n")
        for n, line in enumerate(t.splitlines())),
    # a poster's bold on the lines they point at (Markdown's ** around a line or a word, BBCode's [b])
    "bold": lambda t: "".join(f"**{line}**\n" if n % 3 == 1 else f"[b]{line}[/b]\n" if n % 3 == 2 and line else
                              f"{line}\n" for n, line in enumerate(t.splitlines())),
}


def findings(text: str, folder: Path, encoding: str = "utf-8") -> list[tuple[str, str, tuple[str, ...]]] | None:
    path = folder / "capture.txt"
    path.write_bytes(text.encode(encoding))
    out, err = io.StringIO(), io.StringIO()
    if run([path], as_json=True, out=out, err=err) != 0:
        return None
    return [(f["kind"], f["confidence"], tuple(f["subjects"])) for f in json.loads(out.getvalue())["findings"]]


@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_a_wrapped_capture_is_read_as_the_bare_one(wrapper: str, tmp_path: Path) -> None:
    changed = []
    for block in every_block():
        bare, wrapped = findings(block.capture, tmp_path), findings(WRAPPERS[wrapper](block.capture), tmp_path)
        if bare != wrapped:
            changed.append((block.key, bare[:1] if bare else None, wrapped[:1] if wrapped else None))
    assert not changed, changed


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_capture_saved_as_utf16_is_read_as_the_bare_one(encoding: str, tmp_path: Path) -> None:
    """With its byte-order mark (PowerShell 5's ``>``) and without one: every other byte zero (before, no capture in
    UTF-16 was read at all)."""
    changed = [block.key for block in every_block()
               if findings(block.capture, tmp_path) != findings(block.capture, tmp_path, encoding)]
    assert not changed, changed


def test_forum_markup_is_taken_off() -> None:
    """BBCode's [code], a <pre> block and numeric entities, as forums write them; a paragraph only partly indented
    keeps its indentation (sensors' continuation lines stay under their reading)."""
    text = "[code]\nfan1: 1200 RPM\n[/code]\n<pre>\ntemp1: +45.0&#176;C\n</pre>\n"
    assert cleaned(text) == "fan1: 1200 RPM\ntemp1: +45.0°C\n"
    kept = "edge:  +45.0°C  (crit = +100.0°C)\n       (emerg = +105.0°C)"
    assert cleaned(kept) == kept
    # a poster's bold inside a line: "**fan2:  0 RPM**" read as a label "**fan2" made a second fan of fan2
    assert cleaned("**fan2:           0 RPM**  (min =    0 RPM)\n**AUXTIN:      +127.5°C ** (high\n") == (
        "fan2:           0 RPM  (min =    0 RPM)\nAUXTIN:      +127.5°C  (high\n")


def test_double_spaced_and_tab_separated_pastes_are_read() -> None:
    """A page that set every line as a paragraph (a blank line after each) is read as the lines it holds; liquidctl's
    tree with a tab where the terminal had spaces keeps its readings (the tab was no separator: nothing read)."""
    assert cleaned("fan1: 1200 RPM\n\nfan2: 0 RPM\n\ntemp1: +45.0°C\n\ntemp2: +50.0°C\n") == (
        "fan1: 1200 RPM\nfan2: 0 RPM\ntemp1: +45.0°C\ntemp2: +50.0°C\n")
    assert cleaned("fan1: 1200 RPM\n\nfan2: 0 RPM\n") == "fan1: 1200 RPM\n\nfan2: 0 RPM\n"  # too short to tell
    tree = "Corsair Hydro H100i Pro XT\n├── Liquid temperature\t31.5  °C\n├── Fan 1 speed\t1192  rpm\n"
    assert parse(tree) == [("Corsair Hydro H100i Pro XT", [("Liquid temperature", 31.5, "°C"),
                                                          ("Fan 1 speed", 1192.0, "rpm")])]
    # a table copied from a page gives its cells a tab apart: "CPU Fan<TAB>1200 RPM" is the label and its reading,
    # as two spaces or more are (it was refused as no reading)
    copied = [(r.label, r.value, r.unit) for r in read.read("CPU Fan\t1200 RPM\nSystem Fan\t900 RPM\nCPU\t45 C\n")[0]]
    assert copied == [("CPU Fan", 1200.0, "rpm"), ("System Fan", 900.0, "rpm"), ("CPU", 45.0, "c")]
    # a label that names the speed ("Fan 0 speed: 2161 RPM", as iStats prints it) names the fan without it: the
    # answer said "The Fan 0 speed runs at 2,161 RPM"
    assert [(r.label, r.value) for r in read.read("Fan 0 speed:            2161 RPM    ▁▂▃▅▆▇\n")[0]] == [
        ("Fan 0", 2161.0)]



def collapsed(text: str) -> str:
    """A paste as a page shows it that collapses white space (HTML outside <pre>): every run of spaces and tabs one
    space, and no line indented."""
    return "".join(re.sub(r"[ \t]+", " ", line).strip() + "\n" for line in text.splitlines())


# The formats whose meaning lies in their spaces, which no reader can take back once a page collapsed them: YAML's
# structure is its indentation (thinkfan.conf(5)), and a space-aligned table's columns are its spaces (rocm-smi)
SPACE_BOUND = {"laptops-02": "thinkfan's YAML configuration", "more-amdgpu-05": "rocm-smi's space-aligned table"}


def test_a_capture_whose_white_space_a_page_collapsed_is_read_as_the_bare_one(tmp_path: Path) -> None:
    """`sensors -u`'s subfeatures lose their indent and liquidctl's rows the run of spaces before their value: both
    are read as before (before, the subfeatures under a label were read as labels of their own, and every liquidctl
    cooler was "no fan read"). The blocks whose format is its spaces are named, and only they may change."""
    changed = {block.key for block in every_block()
               if findings(block.capture, tmp_path) != findings(collapsed(block.capture), tmp_path)}
    assert changed == set(SPACE_BOUND), changed
    assert parse("Corsair Hydro H100i Pro XT\n├── Liquid temperature 31.5 °C\n├── Fan 1 speed 1192 rpm\n") == [
        ("Corsair Hydro H100i Pro XT", [("Liquid temperature", 31.5, "°C"), ("Fan 1 speed", 1192.0, "rpm")])]


def test_liquidctl_tree_glyphs_a_console_could_not_draw() -> None:
    """liquidctl's status tree as a console without its box-drawing glyphs shows it: each glyph replaced with "?" by an
    encoding that has none, or drawn in ASCII ("|--", "`--"); the rows are the same readings (before, no row was
    read and the cooler was "no fan read")."""
    want = [("Corsair Hydro H100i Pro XT", [("Liquid temperature", 31.5, "°C"), ("Fan 1 speed", 1192.0, "rpm")])]
    assert parse("Corsair Hydro H100i Pro XT\n??? Liquid temperature    31.5  °C\n??? Fan 1 speed    1192  rpm\n"
                 ) == want  # the "?" of a lost ° is the capture reader's (the question-degrees wrapper)
    assert parse("Corsair Hydro H100i Pro XT\n|-- Liquid temperature    31.5  °C\n`-- Fan 1 speed    1192  rpm\n"
                 ) == want


def test_several_commands_of_several_tools_in_one_paste_are_all_read() -> None:
    """`$ sensors` then `$ ipmitool sdr` in one paste: each command's output is read with its own format (only the
    first format that read anything was, and the board's fans were dropped); one tool's output twice is not read
    twice."""
    text = ("$ sensors\nnct6798-isa-0290\nAdapter: ISA adapter\nfan1:       FAULT\nfan2:      1200 RPM\n"
            "$ ipmitool sdr\nFAN1             | 9600 RPM          | ok\nCPU Temp         | 44 degrees C      | ok\n")
    found, kind = read.read(text)
    assert {(r.chip, r.label) for r in found} >= {("nct6798", "fan1"), ("bmc", "FAN1")}
    assert kind is not None and " and " in kind
    twice = "$ sensors\nfan1: 1200 RPM\n$ sensors\nfan1: 1300 RPM\n"
    assert len(read.read(twice)[0]) == 2
    both = ('$ sensors asus-isa-0000\nasus-isa-0000\nAdapter: ISA adapter\ncpu_fan:     2400 RPM\n'
            '$ sensors -j asus-isa-0000\n{"asus-isa-0000": {"Adapter": "ISA adapter", '
            '"cpu_fan": {"fan1_input": 2400.000}}}\n')  # one fan in sensors' two formats: one fan, not two
    assert [f.label for f in machine(read.read(both)[0]).fans] == ["cpu_fan"]


@pytest.mark.parametrize("prompt", ["[user@fedora ~]$ ", "[root@server tmp]# ", "user@host ~ % ", "mybox% ",
                                    "➜  ~ ", "user@host ~> ", "~> ", "[1020] host:~ $ "])
def test_each_shells_prompt_starts_a_command_of_its_own(prompt: str) -> None:
    """The same two commands behind the prompts people's shells print (Fedora's and Arch's bash, zsh, oh-my-zsh,
    fish, a numbered history): each output is read with its own format, as behind "$ " (only the board's fans were
    read before, the BMC's dropped)."""
    text = (f"{prompt}sensors\nnct6798-isa-0290\nAdapter: ISA adapter\nfan2:      1200 RPM\n"
            f"{prompt}ipmitool sdr\nFAN1             | 9600 RPM          | ok\n"
            "CPU Temp         | 44 degrees C      | ok\n")
    assert {(r.chip, r.label) for r in read.read(text)[0]} >= {("nct6798", "fan2"), ("bmc", "FAN1")}


@pytest.mark.parametrize("prompt", ["[user@fedora ~]$ ", "[root@server tmp]# ", "user@host ~ % ", "mybox% ",
                                    "➜  ~ ", "user@host ~> ", "[1020] host:~ $ ", "pi@raspberrypi:~ $ ", "$ ",
                                    "/sys/class/hwmon/hwmon3# "])
def test_a_cat_session_behind_each_shells_prompt_is_read(prompt: str, tmp_path: Path) -> None:
    """A session of ``cat`` of hwmon and thermal files behind the same prompts (one shape of a prompt, in
    app.fans.read.prompts, for every reader): each file's value under its chip (behind Fedora's "[user@host ~]$ " the
    whole session was refused)."""
    hwmon = "".join(f"{prompt}cat /sys/class/hwmon/hwmon3/{name}\n{value}\n" for name, value in
                    (("name", "nct6798"), ("fan2_input", "1210"), ("temp1_input", "41000")))
    code, answer = explain(hwmon, tmp_path)
    fans = answer.get("fans")
    assert code == 0 and isinstance(fans, list)
    assert [(f["chip"], f["rpm"]) for f in fans] == [("nct6798", 1210)]
    zone = f"{prompt}cat /sys/class/thermal/thermal_zone0/temp\n47000\n"
    assert [(r.value, r.unit) for r in read.read(zone)[0]] == [(47.0, "c")]


@pytest.mark.parametrize("line", ["100% Full", "54%   59C    P0    53W / 120W", "fan1: 40% of max", "Note: # of fans"])
def test_a_line_of_output_is_no_prompt(line: str) -> None:
    """A reading that starts with a percent or holds a # is a tool's output, not a shell's prompt: it must not cut a
    command's output in two."""
    assert read._PROMPT.match(line) is None


def test_a_yaml_configuration_keeps_its_nesting_across_blank_lines(tmp_path: Path) -> None:
    """thinkfan.conf(5)'s YAML as a ThinkPad E540's owner pasted it, a blank line between the list's entries: the
    entries after a blank line are indented two spaces, the nesting, not a Markdown code block (CommonMark's indented
    block needs four), so the configuration is read and its levels described. Each paragraph was dedented before
    (the YAML broke, and the configuration said nothing)."""
    text = ("sensors:\n  - hwmon: /sys/class/hwmon\n    name: coretemp\n    indices: [1]\n\n"
            "  - hwmon: /sys/class/hwmon\n    name: acpitz\n    indices: [1]\n\n"
            "fans:\n  - tpacpi: /proc/acpi/ibm/fan\n\n"
            "levels:\n  - speed: 0\n    upper_limit: [50, 50]\n\n  - speed: 3\n    lower_limit: [45, 45]\n"
            "    upper_limit: [65, 65]\n\n  - speed: \"level full-speed\"\n    lower_limit: [65, 65]\n")
    assert cleaned(text) == text
    assert [k for k, _, _ in findings(text, tmp_path) or []] == ["daemon-curve"]
    code = "Here it is:\n\n    fan1: 1200 RPM\n      (continued)\n"  # a code block: four spaces off, no more
    assert cleaned(code) == "Here it is:\n\nfan1: 1200 RPM\n  (continued)\n"


def test_a_listing_grepped_for_its_fan_lines_is_still_read(tmp_path: Path) -> None:
    """``liquidctl status | grep -i fan`` and ``ipmiutil sensor -c | grep Fan`` cut the device's line and the
    table's header: the rows are still each tool's by their own shape (liquidctl's tree glyphs; ipmiutil's record
    id, SDR type and sensor number), so a pump at 0 rpm stays a pump that may have stopped and a BMC's failed fan a
    failed fan; the cooler is named as an unnamed liquidctl device."""
    corpus = {block.key: block.capture for block in every_block()}
    for key, lead in (("liquidctl-daemons-01", ("pump-stopped", "possible")),
                      ("more-servers-bmc-03", ("fan-fault", "known"))):
        grepped = "".join(line + "\n" for line in corpus[key].splitlines()
                          if re.search(r"fan|rpm|pump", line, re.IGNORECASE))
        found = findings(grepped, tmp_path)
        assert found is not None and found[0][:2] == lead, (key, found)
    found = findings("├── Pump speed               0  rpm\n└── Fan 1 speed              0  rpm\n", tmp_path)
    assert found is not None and found[0][2] == ("liquidctl device/Pump",)


def test_a_host_prefix_is_taken_off_only_for_one_host_and_never_a_readings_label() -> None:
    """pdsh's prefix comes off one host's output (dshbak's job); several hosts' lines are several machines and stay
    as they are (a BMC listing of many nodes names each), and a label every line shares (three snapshots of
    ``fan1:``) or a log level (``INFO:``) is the tool's own."""
    one = "node1: nct6798-isa-0290\nnode1: Adapter: ISA adapter\nnode1: fan2:  1200 RPM\n"
    assert cleaned(one) == "nct6798-isa-0290\nAdapter: ISA adapter\nfan2:  1200 RPM\n"
    for kept in ("node1: fan2: 1200 RPM\nnode2: fan2: 900 RPM\nnode3: fan2: 0 RPM\n",
                 "fan1: 1200 RPM\nfan1: 1300 RPM\nfan1: 1250 RPM\n",
                 "INFO: Fan speed 40 %\nINFO: Fan speed 45 %\nINFO: Fan speed 50 %\n"):
        assert cleaned(kept) == kept


SUMMED = ("| Component | Reading |\n|---|---|\n| CPU Fan | 1200 RPM |\n| CPU | 78 °C |\n| GPU Fan | 0 RPM |\n"
          "| GPU | 83 °C |\n")


def test_a_posters_own_table_of_readings_is_read_and_named_no_bmcs(tmp_path: Path) -> None:
    """A post's Markdown table of a label and its reading (two cells a row, the reading with its unit) holds
    readings, so it is read, not refused; a headed table ("Sensor | Value") with no status column is no BMC tool's
    by its shape: its fans are not said to be a BMC's (the fan wing's invariant: no fan is sent to a BMC that the
    capture does not show one has). A row of another shape is still not read by position, and one "|" between a
    label and its reading is read as two or more spaces are."""
    for text in (SUMMED, SUMMED.split("|---|---|\n")[1], "| Sensor | Value |\n|---|---|\n| CPU Fan | 1200 RPM |\n"
                 "| CPU Temp | 78 °C |\n| GPU Fan | 0 RPM |\n| GPU Temp | 83 °C |\n"):
        facts = machine(read.read(text)[0])
        assert [(f.label, f.chip, f.rpm) for f in facts.fans] == [("CPU Fan", None, 1200.0), ("GPU Fan", None, 0.0)]
        code, answer = explain(text, tmp_path)
        assert code == 0 and "BMC" not in str(answer["sentence"])
    assert read.read("| Setting | Before | After |\n| CPU Fan | 1200 RPM | 800 RPM |\n")[0] == []
    facts = machine(read.read("CPU Temperature  |  78.0 °C\nCPU Fan Speed    |  2450 RPM\n")[0])
    assert [(f.label, f.rpm) for f in facts.fans] == [("CPU Fan", 2450.0)]
    assert [t.celsius for t in facts.temperatures] == [78.0]
