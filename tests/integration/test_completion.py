"""Shell completion and the man page, generated from the argument parser (app/cli/completion.py): run through bash's
own `complete`, as Tab would; the man page through groff. (The wheel's installed command:
tests/system/test_packaging.py.)"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.system.test_packaging import completions


def printed(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "app", *args], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def bash_script() -> str:
    return printed("--print-completion", "bash")


@pytest.mark.parametrize(("line", "expected"), [
    ("fanwhy ", ["serve", "snapshot", "run", "exporter"]),
    ("fanwhy sn", ["snapshot"]),
    ("fanwhy snapshot --", ["--backend", "--help", "--json", "--processes", "--watch"]),
    ("fanwhy exporter --p", ["--port"]),
    ("fanwhy --backend ", ["auto", "nvidia", "amd", "basic", "simulated"]),
    ("fanwhy serve --server g", ["gevent"]),
    ("fanwhy --port ", []),  # a value of the user's: nothing offered
])
def test_bash_completes_commands_flags_and_values(bash_script: str, line: str, expected: list[str]) -> None:
    got = completions(bash_script, line)
    if line.endswith(" ") and line.split()[-1] == "fanwhy":
        assert set(expected) <= set(got) and "--port" in got
    else:
        assert got == expected


def test_explain_completes_files_and_run_completes_a_command_then_its_files(bash_script: str, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """`explain <Tab>` offers the captures (files), `run -- <Tab>` a command on PATH, then files for its arguments,
    as bash-completion's own `_command_offset` would (here without bash-completion loaded: the fallback)."""
    for name in ("sensors.txt", "ipmi-sdr.txt", "notes.md"):
        (tmp_path / name).write_text("x\n")
    tool = tmp_path / "bin" / "fanwhy-test-trainer"
    tool.parent.mkdir()
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{tool.parent}:{os.environ['PATH']}")
    assert completions(bash_script, "fanwhy explain s") == ["sensors.txt"]
    assert set(completions(bash_script, "fanwhy explain ")) >= {"sensors.txt", "ipmi-sdr.txt", "notes.md"}
    assert completions(bash_script, "fanwhy explain --j") == ["--json"]
    assert completions(bash_script, "fanwhy run -- fanwhy-test-tr") == ["fanwhy-test-trainer"]
    assert completions(bash_script, "fanwhy run -- fanwhy-test-trainer no") == ["notes.md"]
    assert completions(bash_script, "fanwhy run --j") == ["--json"]


def test_every_flag_a_command_lists_is_completed_there_and_no_other(bash_script: str) -> None:
    from app.cli.completion import _commands, _flags
    from app.cli.main import parser

    for name, sub in _commands(parser()).items():
        assert completions(bash_script, f"fanwhy {name} --") == _flags(sub), name


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh not installed")
def test_the_zsh_function_parses() -> None:
    script = printed("--print-completion", "zsh")
    assert script.startswith("#compdef fanwhy")
    done = subprocess.run(["zsh", "-n", "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr


def test_the_zsh_function_names_every_command() -> None:
    script = printed("--print-completion", "zsh")
    for name in ("serve", "snapshot", "run", "exporter"):
        assert f"'{name}:" in script and f"        {name}) shift words" in script


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff not installed")
def test_the_man_page_renders_without_warnings_and_lists_every_command() -> None:
    page = printed("--print-man")
    done = subprocess.run(["groff", "-man", "-Tutf8", "-ww"], input=page, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    for heading in ("FANWHY SNAPSHOT", "FANWHY RUN", "FANWHY EXPORTER", "EXIT STATUS"):
        assert heading in page
    text = re.sub(".\x08", "", done.stdout).replace("‐", "-")  # bold and underline are overstruck on a terminal
    assert "--watch" in text and "fanwhy snapshot" in text.lower()


def test_the_documented_completion_line_installs_on_a_fresh_home(tmp_path: Path) -> None:
    """docs/CLI.md's bash line, run as written in a home where the folder does not exist yet: the file is made, and
    loaded as bash-completion loads it, it completes."""
    readme = (Path(__file__).resolve().parents[2] / "docs" / "CLI.md").read_text()
    spans = [span for span in re.findall(r"`([^`\n]+)`", readme) if "--print-completion bash" in span]
    assert len(spans) == 1 and spans[0].startswith("mkdir -p "), spans
    line = spans[0]
    home, bin_dir = tmp_path / "home", tmp_path / "bin"
    home.mkdir()
    bin_dir.mkdir()
    (bin_dir / "fanwhy").write_text(f"#!/bin/sh\nexec {sys.executable} -m app \"$@\"\n")
    (bin_dir / "fanwhy").chmod(0o755)
    root = str(Path(__file__).resolve().parents[2])
    env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": root}
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", line], env=env, cwd=root, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    script = (home / ".local" / "share" / "bash-completion" / "completions" / "fanwhy").read_text()
    assert completions(script, "fanwhy sn") == ["snapshot"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh not installed")
@pytest.mark.parametrize(("line", "completed"), [
    ("fanwhy sn", "fanwhy snapshot "),
    ("fanwhy top --r", "fanwhy top --readonly "),
    ("fanwhy run --j", "fanwhy run --json "),
    ("fanwhy explain s", "fanwhy explain sensors.txt "),
    ("fanwhy run -- fanwhy-test-tr", "fanwhy run -- fanwhy-test-trainer "),
    ("fanwhy run -- fanwhy-test-trainer no", "fanwhy run -- fanwhy-test-trainer notes.md "),
])
def test_zsh_completes_as_a_person_presses_tab(tmp_path: Path, line: str, completed: str) -> None:
    """The zsh function loaded by compinit in an interactive zsh (a pseudo-terminal), Tab pressed after ``line``:
    the line zsh shows then. Commands, flags, the files `explain` reads, the command `run` runs and its files."""
    import pexpect

    folder, bin_dir, work = tmp_path / "zfunc", tmp_path / "bin", tmp_path / "work"
    for made in (folder, bin_dir, work):
        made.mkdir()
    (folder / "_fanwhy").write_text(printed("--print-completion", "zsh"))
    for name in ("fanwhy", "fanwhy-test-trainer"):
        (bin_dir / name).write_text("#!/bin/sh\n")
        (bin_dir / name).chmod(0o755)
    for name in ("sensors.txt", "notes.md"):
        (work / name).write_text("x\n")
    shell = pexpect.spawn("zsh", ["-f"], env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path),
                                              "TERM": "dumb"}, cwd=str(work), encoding="utf-8", timeout=30)
    try:
        shell.sendline(f"PS1='> '; fpath=({folder} $fpath); autoload -Uz compinit; compinit -u -D; echo READY")
        shell.expect("READY")
        shell.send(line + "\t")
        shell.expect_exact(completed)
    finally:
        shell.close(force=True)
