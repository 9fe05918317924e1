"""docs/FAN-CORPUS.md, made from the fan corpus: block by block, what FanWhy says of that machine (``fanwhy explain``
on the block's capture) beside what the thread established. ``python -m tests.support.corpus_table`` rewrites it;
tests/test_replay.py fails when it is out of date."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

from app.cli.replay import run
from tests.support.corpus import blocks

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "FAN-CORPUS.md"
HEAD = """# The fan corpus, replayed

Made by `python -m tests.support.corpus_table` (tests/test_replay.py fails when this page is out of date). Each row is
one real machine of `tests/fixtures/fans/corpus/` (its source is in the file): what `fanwhy explain` says from the
block's capture, beside what the thread established (`[from thread]`) or what a careful reading infers
(`[inferred]`). A capture FanWhy does not read yet (nvidia-smi -q, nvidia-settings, liquidctl, ipmiutil, the ThinkPad's
`/proc/acpi/ibm/fan`, tools' own logs) says so. Whether each sentence agrees with the answer is not judged on this
page yet: read the two columns.

| block | machine | FanWhy says | the answer |
|---|---|---|---|
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def table() -> str:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for block in blocks():
            path = Path(folder) / f"{block.key}.txt"
            path.write_text(block.capture)
            out, err = io.StringIO(), io.StringIO()
            if run([path], as_json=True, out=out, err=err) == 0:
                said = json.loads(out.getvalue())["sentence"]
            else:
                said = "(not read: " + err.getvalue().split(": ", 2)[-1].split(" (")[0].strip() + ")"
            answer = f"{block.answer} [{block.established}]" if block.answer else "(nobody can say)"
            rows.append(f"| {block.key} | {_cell(block.title)} | {_cell(said)} | {_cell(answer)} |")
    return HEAD + "\n".join(rows) + "\n"


if __name__ == "__main__":
    DOC.write_text(table())
