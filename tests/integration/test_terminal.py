"""The terminal's process table: the program a person knows, the command line in what the terminal has left (cut
with "…"), and no GPU columns on a machine without a GPU."""

from __future__ import annotations

from app.cli.terminal import render
from tests.support.builders import gpu, proc, snap

LONG = "/usr/bin/python3 /home/alice/projects/llm/train.py --model meta-llama/Llama-3-70B --lr 3e-4 --epochs 90 " \
       "--output /scratch/alice/runs/2026-11-27"


def table(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["PID", "USER"])
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start:end]


def test_a_wide_terminal_shows_the_whole_command_and_a_narrow_one_cuts_it_with_an_ellipsis() -> None:
    now = snap([gpu(util=90)], [proc(7, LONG, sm=90)])
    wide = table(render(now, width=260))
    assert wide[0].split()[-2:] == ["PROGRAM", "COMMAND"] and "python3 train.py" in wide[1]
    assert wide[1].endswith(LONG) and "…" not in wide[1]
    narrow = table(render(now, width=100))
    assert all(len(line) <= 100 for line in narrow) and narrow[1].endswith("…")
    assert "python3 train.py" in narrow[1]
    tiny = table(render(now, width=60))
    assert tiny[0].split()[-1] == "PROGRAM" and "python3 train.py" in tiny[1]  # no room: the program stays


def test_no_gpu_columns_without_a_gpu() -> None:
    now = snap([], [proc(7, "python3 train.py", gpu_index=None, cpu=90)])
    lines = table(render(now, width=200))
    assert lines[0].split() == ["PID", "USER", "CPU", "PROGRAM", "COMMAND"]
    assert "–" not in lines[1].split()[:3]


def test_a_pipe_gets_whole_command_lines_and_a_terminal_width_cuts_them() -> None:
    import subprocess
    import sys

    env = {"FANWHY_BACKEND": "simulated", "FANWHY_SIM_GPUS": "1", "FANWHY_DB": "none"}
    import os

    base = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    for _ in range(3):  # the one-shot starts the simulated job itself: on a loaded machine it may not be up yet
        piped = subprocess.run([sys.executable, "-m", "app", "snapshot"], capture_output=True, text=True,
                               timeout=60, env={**base, **env})
        rows = table(piped.stdout)
        if any("--api-key=" in row for row in rows):
            break
    simulated = next(row for row in rows if "--api-key=" in row)  # not the first row: a busy test beside may be
    assert rows[0].split()[-1] == "COMMAND" and "…" not in simulated and "--api-key=****" in simulated
    narrow = subprocess.run([sys.executable, "-m", "app", "snapshot"], capture_output=True, text=True, timeout=60,
                            env={**base, **env, "COLUMNS": "90"})
    assert all(len(line) <= 90 for line in table(narrow.stdout))
