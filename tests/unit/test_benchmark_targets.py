"""The performance targets live once, in benchmarks/targets.py: each benchmark judges against them and exits 1 on a
miss, and docs/PERFORMANCE.md's table words every one of them as the code does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchmarks import targets

ROOT = Path(__file__).resolve().parent.parent.parent


def _table_targets() -> list[str]:
    page = (ROOT / "docs" / "PERFORMANCE.md").read_text()
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in page.splitlines()
            if line.startswith("| ") and not line.startswith("| measure")]
    return [row[2] for row in rows if len(row) > 2]  # the table's third column: the target


def test_the_docs_table_words_every_target_as_the_benchmarks_judge_it() -> None:
    rows = _table_targets()
    missing = [t.text for t in targets.EVERY if not any(t.text in row for row in rows)]
    assert not missing, missing


def test_a_miss_or_a_value_not_measured_is_exit_1_and_written_down() -> None:
    results: dict[str, object] = {}
    assert targets.judged(results, [(targets.ONESHOT, 1.19), (targets.NVITOP, 50.0)], gpus=4) == 0
    assert targets.judged(results, [(targets.ONESHOT, 1.21)], gpus=4) == 1
    assert results["targets"] == [{"target": targets.ONESHOT.text, "limit": 1.2, "at_most": True, "measured": 1.21,
                                   "met": False}]
    assert targets.judged(results, [(targets.NVITOP, 49.9)]) == 1
    assert targets.judged(results, [(targets.TOP_FIRST_FRAME, None)]) == 1


def test_a_target_naming_more_gpus_than_the_run_had_is_measured_but_not_judged() -> None:
    results: dict[str, Any] = {}
    assert targets.judged(results, [(targets.ONESHOT, 1.11), (targets.TOP_FIRST_FRAME, 150.0)], gpus=1) == 0
    oneshot, frame = results["targets"]
    assert oneshot["measured"] == 1.11 and oneshot["met"] is None
    assert oneshot["not_judged"] == "measured with 1 busy GPU(s); the target names 4"
    assert frame["met"] is True and "not_judged" not in frame  # it names no number of GPUs
    assert targets.judged(results, [(targets.ONESHOT, 1.11)]) == 0  # the GPUs not counted: not judged either
    assert results["targets"][0]["met"] is None
    assert targets.judged(results, [(targets.ONESHOT, 1.11)], gpus=4) == 0
    assert results["targets"][0]["met"] is True
    assert targets.judged(results, [(targets.ONESHOT, 1.3)], gpus=4) == 1
    assert targets.judged(results, [(targets.TOP_CPU, None)], gpus=4) == 1  # four GPUs and no figure: a miss
