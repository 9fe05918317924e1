"""docs/FAN-CORPUS.md, made from the fan corpus: block by block, what FanWhy says of that machine (``fanwhy explain``
on the block's capture) beside what the thread established. ``python -m tests.support.corpus_table`` rewrites it;
tests/integration/test_replay.py fails when it is out of date."""

from __future__ import annotations

import io
import json
import tempfile
from collections import Counter
from pathlib import Path

from app.cli.replay import run
from tests.support.corpus import blocks
from tests.support.corpus_judgement import JUDGED

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "FAN-CORPUS.md"
HEAD = """# The fan corpus, replayed

Made by `python -m tests.support.corpus_table` (tests/integration/test_replay.py fails when this page is out of date).
Each row is one real machine of `tests/fixtures/fans/corpus/` (its source is in the file): what `fanwhy explain`
says from the block's capture, beside what the thread established (`[from thread]`) or what a careful reading infers
(`[inferred]`), and a judgement: **agree** (it says what the thread established, or all the capture can show of it),
**partly** (nothing false, but the thread's cause is missed), **disagree** (it says what the thread refutes), **not
read** (a tool's own log or a shell session FanWhy does not read), **no answer** (the thread could not say). The
judgements, with why, and what must stay true of each answer, are `tests/support/corpus_judgement.py`;
`tests/unit/test_corpus.py` checks them block by block.

{counts}

| block | machine | FanWhy says | the answer | judged |
|---|---|---|---|---|
"""


def cell(text: str) -> str:
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
            judged = JUDGED[block.key]
            rows.append(f"| {block.key} | {cell(block.title)} | {cell(said)} | {cell(answer)} | "
                        f"{judged.verdict}: {cell(judged.why)} |")
    return HEAD.format(counts=counts()) + "\n".join(rows) + "\n"


def counts() -> str:
    """The judgements counted by what the thread established."""
    lines = []
    for established in ("from thread", "inferred"):
        keys = [b.key for b in blocks() if b.established == established]
        tally = Counter(JUDGED[k].verdict for k in keys)
        read = len(keys) - tally["not read"]
        lines.append(f"- `[{established}]`: {len(keys)} blocks, {read} read: " + ", ".join(
            f"{tally[v]} {v}" for v in ("agree", "partly", "disagree", "not read") if tally[v]) +
            (f" ({100 * tally['agree'] / read:.0f} % of those read agree)" if read else ""))
    lines.append(f"- no answer in the thread: {sum(1 for b in blocks() if not b.answer)} blocks")
    return "\n".join(lines)


if __name__ == "__main__":
    DOC.write_text(table())
