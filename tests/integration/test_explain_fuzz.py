"""``fanwhy explain`` never tracebacks: every machine of the corpus, with its numbers turned into infinities, NaN,
1e400 and integers of 400 digits (all of them, the first, the last) or with debris glued to them ("90<br", "90x#"),
answers or refuses (exit 0 or 2) and no reader's thread fails on the way; so do JSON
nested 100,000 deep, names of 3,000 characters, ``..`` in a path and a paste of tens of thousands of chips (read up
to its cap, said); and a killed explain's scratch folder does not outlive it."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli.replay import EXPLAIN_PREFIX, run
from app.collect.capture_tree import MAX_CHIPS
from app.fans import read
from app.fans.adapt import machine
from tests.support.corpus import Block, every_block
from tests.support.servers import wait_for

ROOT = Path(__file__).resolve().parents[2]
NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
HOSTILE = ["inf", "-inf", "nan", "NaN", "Infinity", "1e400", "9" * 400, "-" + "9" * 400]
DEBRIS = ["<br", "x#", ".", "%%"]  # what a page, an editor or a mangled paste leaves stuck to a number


def mutations(capture: str) -> list[str]:
    """The capture with its numbers made hostile: every number, the first, the last."""
    found = list(NUMBER.finditer(capture))
    if not found:
        return []
    out = []
    for value in HOSTILE:
        out.append(NUMBER.sub(value, capture))
        for m in (found[0], found[-1]):
            out.append(capture[:m.start()] + value + capture[m.end():])
    out.extend(NUMBER.sub(rf"\g<0>{debris}", capture) for debris in DEBRIS)  # no debris holds a backslash
    return out


def answers(path: Path, as_json: bool = False) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run([path], as_json=as_json, out=out, err=err)
    return code, err.getvalue()


@pytest.mark.parametrize("block", every_block(), ids=lambda b: b.key)
def test_every_machine_with_hostile_numbers_answers_or_refuses(block: Block, tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "capture.txt"
    for n, text in enumerate(mutations(block.capture)):
        path.write_text(text)
        code, said = answers(path, as_json=n % 2 == 1)
        assert code in (0, 2), (n, said)
        assert code == 0 or said.count("\n") == 1, said  # a refusal is one line
    # a reader that raised was restarted by its thread and the answer went on without it: a fault all the same
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


SHAPES = {
    "a JSON array 100,000 deep": "[" * 100_000 + "]" * 100_000,
    "sensors -j 100,000 deep": '{"chip": ' + '{"a": ' * 100_000 + "1" + "}" * 100_000 + "}",
    "a chip name of 3,000 characters": f"/sys/class/hwmon/hwmon0/name:{'n' * 3000}\n"
                                       "/sys/class/hwmon/hwmon0/fan1_input:900\n",
    "an attribute of 3,000 characters": "/sys/class/hwmon/hwmon0/name:nct6798\n"
                                        f"/sys/class/hwmon/hwmon0/{'f' * 3000}:1\n"
                                        "/sys/class/hwmon/hwmon0/fan1_input:900\n",
    "a device/.. line": "/sys/class/hwmon/hwmon0/name:nct6798\n/sys/class/hwmon/hwmon0/device/..:1\n"
                        "/sys/class/hwmon/hwmon0/device/../../../x:1\n/sys/class/hwmon/hwmon0/fan1_input:900\n",
    "a label of 3,000 characters": f"nct6798-isa-0290\nAdapter: ISA adapter\n{'f' * 3000}:  1000 RPM\n",
}


@pytest.mark.parametrize("shape", SHAPES)
def test_deep_long_and_tricky_shapes_answer_or_refuse(shape: str, tmp_path: Path) -> None:
    path = tmp_path / "capture.txt"
    path.write_text(SHAPES[shape])
    for as_json in (False, True):
        code, said = answers(path, as_json)
        assert code in (0, 2) and (code == 0 or said.count("\n") == 1), said


def test_a_path_in_a_capture_never_writes_outside_its_tree(tmp_path: Path) -> None:
    outside = tmp_path / "escaped"
    path = tmp_path / "capture.txt"
    path.write_text("/sys/class/hwmon/hwmon0/name:nct6798\n/sys/class/hwmon/hwmon0/fan1_input:900\n"
                    f"/sys/class/hwmon/hwmon0/device/{'../' * 40}{str(outside).lstrip('/')}:1\n"
                    f"/sys/class/hwmon/hwmon0/{'../' * 40}{str(outside).lstrip('/')}:1\n")
    for as_json in (False, True):
        assert answers(path, as_json)[0] == 0
    assert not outside.exists()


def test_a_paste_of_thousands_of_chips_is_read_up_to_its_cap_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "many.txt"
    path.write_text("".join(f"nct{n}-isa-0290\nAdapter: ISA adapter\nfan1: {900 + n % 500} RPM\n\n"
                            for n in range(MAX_CHIPS + 3000)))
    out, err = io.StringIO(), io.StringIO()
    assert run([path], as_json=True, out=out, err=err) == 0, err.getvalue()
    said = json.loads(out.getvalue())
    chips = {f["chip"] for f in said["fans"]}
    assert len(chips) == MAX_CHIPS and "nct0" in chips and f"nct{MAX_CHIPS}" not in chips
    assert any("3,000 more left out" in kind for kind in said["read_as"]), said["read_as"]


def test_a_long_paste_is_read_by_the_format_its_start_shows_and_to_its_last_snapshot() -> None:
    """Past PROBE_CHARS a format is tried whole only where it reads the paste's start, and the general reader stops
    at the header of the (MAX_CHIPS + 1)-th distinct chip: a `watch` of three chips logged for hours (a MiB) is a
    few chips again and again, read to its last snapshot, which is current (not cut where a count of headers would
    have cut it); a listing of thousands of distinct chips is read up to its cap (their fact readers cost seconds a
    MiB: `benchmarks/explain_cost.py`)."""
    snapshot = ("nct6798-isa-0290\nAdapter: ISA adapter\nfan2: {rpm} RPM\nCPUTIN: +40.0°C\n\n"
                "k10temp-pci-00c3\nAdapter: PCI adapter\nTctl: +{cpu}.0°C\n\n"
                "amdgpu-pci-0b00\nAdapter: PCI adapter\nedge: +50.0°C\n\n")
    rounds = [snapshot.format(rpm=800, cpu=45)] * 9000 + [snapshot.format(rpm=1650, cpu=74)]
    text = "".join(rounds)
    assert len(text) > read.PROBE_CHARS * 3
    facts = machine(read.read(text)[0])
    assert [(f.key, f.rpm) for f in facts.fans] == [("nct6798/fan2", 1650.0)]
    assert [(t.key, t.celsius) for t in facts.temperatures if t.chip == "k10temp"] == [("k10temp/Tctl", 74.0)]
    many = "".join(f"nct{n}-isa-0290\nAdapter: ISA adapter\nfan1: {900 + n % 500} RPM\n\n" for n in range(20000))
    assert len(many) > read.PROBE_CHARS
    assert len({r.chip for r in read.read(many)[0]}) == read.MAX_CHIPS


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_explain_leaves_no_scratch_folder(signum: int, tmp_path: Path) -> None:
    """Killed while it waits for its standard input: SIGTERM removes the folder on the way out; after SIGKILL the
    next explain removes it. In a temporary directory of the test's own (TMPDIR): any explain sweeps the folders of
    ended processes, so one run beside it in the same directory could remove what the kill left before it is seen."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}

    def ours() -> set[str]:
        return {p.name for p in tmp_path.glob(f"{EXPLAIN_PREFIX}*")}

    child = subprocess.Popen([sys.executable, "-m", "app", "explain", "-"], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: any(n.startswith(f"{EXPLAIN_PREFIX}{child.pid}-") for n in ours()), timeout=60)
        child.send_signal(signum)
        child.wait(60)
    finally:
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                stream.close()
    left = {n for n in ours() if n.startswith(f"{EXPLAIN_PREFIX}{child.pid}-")}
    if signum == signal.SIGTERM:
        assert not left and child.returncode == 128 + signal.SIGTERM
        return
    assert left  # kill -9 runs nothing
    capture = tmp_path / "c.txt"
    capture.write_text("nct6798-isa-0290\nAdapter: ISA adapter\nfan1:  1000 RPM\n")
    done = subprocess.run([sys.executable, "-m", "app", "explain", str(capture)], cwd=ROOT, env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not {n for n in ours() if n.startswith(f"{EXPLAIN_PREFIX}{child.pid}-")}
