"""Shell completion and the man page, generated from the argument parser (app/cli/completion.py): run through bash's
own `complete`, as Tab would; the man page through groff. (The wheel's installed command:
tests/system/test_packaging.py.)"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

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
    ("fanwhy run -- pyth", []),  # the command run: not fanwhy's to complete
])
def test_bash_completes_commands_flags_and_values(bash_script: str, line: str, expected: list[str]) -> None:
    got = completions(bash_script, line)
    if line.endswith(" ") and line.split()[-1] == "fanwhy":
        assert set(expected) <= set(got) and "--port" in got
    else:
        assert got == expected


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
        assert f"'{name}:" in script and f"        {name}) _arguments" in script


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff not installed")
def test_the_man_page_renders_without_warnings_and_lists_every_command() -> None:
    page = printed("--print-man")
    done = subprocess.run(["groff", "-man", "-Tutf8", "-ww"], input=page, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    for heading in ("FANWHY SNAPSHOT", "FANWHY RUN", "FANWHY EXPORTER", "EXIT STATUS"):
        assert heading in page
    text = re.sub(".\x08", "", done.stdout).replace("‐", "-")  # bold and underline are overstruck on a terminal
    assert "--watch" in text and "fanwhy snapshot" in text.lower()
