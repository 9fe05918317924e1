"""Nothing raw reaches a terminal or a consumer: every string FanWhy prints or sends (a receipt, an error line, a
file name, a notification body, a recording label, a log line, the terminal's tables) carries a hostile name's
control characters (C0, C1: an escape sequence, a bell, OSC 52) and its bidirectional and line controls (RLO, LRI,
RLM, U+2028) as visible escapes, never as themselves (app.core.cells.shown)."""

from __future__ import annotations

import io
import json
import logging
import sqlite3
import subprocess
import sys
import unicodedata
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli.main import ShownFormatter
from app.cli.replay import run as explain
from app.cli.terminal import render as snapshot_text
from app.cli.topstate import History as TopHistory
from app.cli.topstate import TopState
from app.cli.topview import UNICODE, frame
from app.core.cells import shown, width
from app.core.fan import Fan
from app.core.jsonvalue import Json
from app.core.snapshot import Alert
from app.verdict.notify import KINDS, render
from tests.support.builders import gpu, proc, snap

ROOT = Path(__file__).resolve().parents[2]
# OSC title, BEL, CSI clear, OSC 52 clipboard, C1 CSI and NEL, RLO, LRI, RLM, LINE SEPARATOR, a tab
HOSTILE = "a\x1b]0;owned\x07b\x1b[2Jc\x1b]52;c;ZXZpbA==\x07d\x9b31me\x85f\u202eg\u2066h\u200fi\u2028j\tk"


def raw(text: str) -> list[str]:
    """The characters of ``text`` that would act on a terminal or turn text around (a line break is layout)."""
    return [hex(ord(c)) for c in text if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*strings(k), *strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def test_the_cleaner_escapes_every_class_and_counts_wide_characters_in_cells() -> None:
    assert raw(HOSTILE) and not raw(shown(HOSTILE))
    assert "\\x1b]0;owned\\x07" in shown(HOSTILE) and "\\u202e" in shown(HOSTILE) and "\\u2028" in shown(HOSTILE)
    assert width("训练任务") == 8 and width(shown("训\u202e练")) == 4 + len("\\u202e")


def test_fanwhy_run_says_a_hostile_command_that_cannot_start_as_text() -> None:
    done = subprocess.run([sys.executable, "-m", "app", "run", "--backend", "simulated", "--", f"/no/{HOSTILE}"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 127 and "No such file" in done.stderr, done.stderr
    assert not raw(done.stderr) and not raw(done.stdout) and "\\x1b]0;owned" in done.stderr


@pytest.mark.parametrize("as_json", [False, True])
def test_the_receipt_shows_the_command_as_text(tmp_path: Path, as_json: bool) -> None:
    from app.cli.run import run_command
    from tests.integration.test_receipt import fake_gpu_monitor

    out = io.StringIO()
    assert run_command([sys.executable, "-c", "pass", HOSTILE], fake_gpu_monitor(tmp_path), as_json, out=out) == 0
    said = [*strings(json.loads(out.getvalue()))] if as_json else [out.getvalue()]
    assert all(not raw(s) for s in said) and any("\\u202e" in s for s in said)


def test_explain_names_hostile_files_as_text(tmp_path: Path) -> None:
    empty, missing = tmp_path / f"empty{HOSTILE}.txt", tmp_path / f"missing{HOSTILE}.txt"
    empty.write_text("nothing here\n")
    capture = tmp_path / f"cap{HOSTILE}.txt"
    capture.write_text(f"/sys/class/hwmon/hwmon6/name:nct6798\n/sys/class/hwmon/hwmon6/fan2_input:2119\n"
                       f"/sys/class/hwmon/hwmon6/fan2_label:CPU{HOSTILE}\n/sys/class/hwmon/hwmon6/temp1_input:45000\n")
    for path, code in ((empty, 2), (capture, 0)):
        out, err = io.StringIO(), io.StringIO()
        assert explain([path], out=out, err=err) == code
        assert not raw(out.getvalue()) and not raw(err.getvalue()), (out.getvalue(), err.getvalue())
    done = subprocess.run([sys.executable, "-m", "app", "explain", str(missing)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "missing" in done.stderr and not raw(done.stderr), done.stderr


@pytest.mark.parametrize("kind", KINDS)
def test_notification_bodies_carry_the_cleaned_text(kind: str) -> None:
    alert = Alert(id="fan_stalled:x", rule="fan_stalled", gpu_index=None, severity="critical",
                  message=f"fan {HOSTILE} stalled", value=0.0, threshold=None, since=1.0)
    body, headers = render(kind, f"box{HOSTILE}", [alert])
    said = strings(json.loads(body)) if headers["Content-Type"] == "application/json" else [body.decode()]
    said += list(headers.values())
    assert all(not raw(s) for s in said) and any("\\x1b]52" in s for s in said), said


def test_a_recording_label_is_kept_as_text(tmp_path: Path) -> None:
    from app.application import receipt_meter
    from app.store.history import History
    from app.store.recordings import Recorder

    history = History(tmp_path / "h.db", retention_hours=1).open()
    try:
        recorder = Recorder(history, receipt_meter)
        recorder.start("r1", f"job {HOSTILE}", None, 1.0, 1000.0)
        found = recorder.get("r1")
        assert found is not None and not raw(found["label"]) and "\\u2066" in found["label"]
        with sqlite3.connect(history.path) as db:
            assert not raw(db.execute("SELECT label FROM recordings").fetchone()[0])
    finally:
        history.close()


def test_a_log_line_is_written_as_text() -> None:
    record = logging.LogRecord("fanwhy", logging.WARNING, __file__, 1, "process %s ended", (HOSTILE,), None)
    line = ShownFormatter("%(message)s").format(record)
    assert not raw(line) and line.startswith("process a\\x1b]0;owned")


def test_the_terminals_tables_show_every_hostile_name_as_text() -> None:
    hostile = replace(gpu(0, util=90, power=300), name=f"H200{HOSTILE}")
    machine = snap([hostile], [proc(1234, f"train{HOSTILE} --x", user=f"u{HOSTILE}", container=f"c{HOSTILE}")],
                   fans=(Fan(id="hwmon:nct/fan1", chip=f"nct{HOSTILE}", channel=1, label=f"CPU{HOSTILE}", rpm=1200,
                             percent=50.0),))
    machine = replace(machine, host=replace(machine.host, hostname=f"box{HOSTILE}"))
    assert not raw(snapshot_text(machine))
    from app.collect.serialize import to_json

    view: dict[str, Json] = {"timestamp": 1.0, "host": {"hostname": f"box{HOSTILE}"}, "backend": {"name": "t"},
            "gpus": to_json(list(machine.gpus)), "processes": to_json(list(machine.processes)),
            "fans": to_json(list(machine.fans)), "alerts": [{"message": HOSTILE, "severity": "warning"}],
            "verdict": {"headline": f"GPU 0 is busy: {HOSTILE}", "busy": True,
                        "causes": [{"kind": "fan", "summary": HOSTILE}]}}
    history = TopHistory()
    history.remember(view)
    for state in (TopState(), TopState(detail=True)):
        lines = frame(view, state, history, 160, 50, UNICODE)
        assert not raw("\n".join("".join(t for t, _ in line) for line in lines))
