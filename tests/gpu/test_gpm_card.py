"""What kind of busy on the real card: each load alone, read by FanWhy and by ``nvidia-smi dmon --gpm-metrics`` over
the same seconds (benchmarks/gpm_card.py), as root and as an unprivileged user."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).resolve().parent.parent.parent
# The kind each load must be given (app/verdict/busykind.py); the tiny-kernel loop spins its CPU core as it waits on
# each kernel, so it is a job waiting on its host; nothing at all is not judged.
KINDS = {"fp32": {"fp32"}, "tf32": {"tensor"}, "bf16": {"tensor"}, "tiny": {"waiting", "not_computing"},
         "copy": {"memory"}, "idle": set()}
AGREE_POINTS = 5.0


def _card(tmp: Path, loads: str, user: int | None = None) -> dict[str, Any]:
    """benchmarks/gpm_card.py's report (its standard output), run as ``user`` where given."""
    command = [sys.executable, "-m", "benchmarks.gpm_card", "--loads", loads]
    if user is not None:
        command = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    done = subprocess.run(command, cwd=ROOT, check=True, timeout=600, capture_output=True, text=True,
                          env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    result: dict[str, Any] = json.loads(done.stdout)
    (tmp / f"gpm-{user}.json").write_text(done.stdout)
    if os.environ.get("OUT"):
        shutil.copy(tmp / f"gpm-{user}.json", Path(os.environ["OUT"]) / f"gpm-{user}.json")
    return result


@pytest.fixture(scope="module")
def card(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _card(tmp_path_factory.mktemp("gpm"), ",".join(KINDS))


@pytest.mark.parametrize("load", list(KINDS))
def test_each_load_is_its_kind_and_agrees_with_nvidia_smi(card: dict[str, Any], load: str) -> None:
    seen = card["loads"][load]
    assert seen["reason"] is None and seen["windows"] >= 5, seen
    said = set(seen["kinds"])
    assert said <= KINDS[load] and (said or not KINDS[load]), (load, seen["kinds"], seen["headline"])
    compared = 0
    for field, theirs in seen["dmon"].items():
        ours = seen["fanwhy"][field]
        if theirs is not None:
            assert ours is not None and abs(ours - theirs) <= AGREE_POINTS, (load, field, ours, theirs)
            compared += 1
    assert compared >= 6, seen["dmon_raw"]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root to become another user")
def test_an_unprivileged_user_reads_the_counters_too(tmp_path: Path) -> None:
    nobody = _card(tmp_path, "bf16,idle", user=65534)
    assert nobody["uid"] == 65534
    assert nobody["loads"]["bf16"]["reason"] is None and set(nobody["loads"]["bf16"]["kinds"]) == {"tensor"}
