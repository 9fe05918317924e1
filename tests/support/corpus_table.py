"""docs/FAN-CORPUS.md, made from the fan corpus: block by block, what FanWhy says of that machine (``fanwhy explain``
on the block's capture), its leading finding, beside what the thread established, and the judgement the findings
test makes of it (tests/support/fan_expectations.py, checked by tests/unit/test_fan_wing.py).
``python -m tests.support.corpus_table`` rewrites it; tests/integration/test_replay.py fails when it is out of date."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

from app.cli.replay import run
from tests.support.corpus import Block, every_block
from tests.support.fan_expectations import EXPECTED, SEEN, held_out

DOC = Path(__file__).resolve().parent.parent.parent / "docs" / "FAN-CORPUS.md"
HEAD = """# The fan corpus, replayed

Made by `python -m tests.support.corpus_table` (tests/integration/test_replay.py fails when this page is out of date).
Each row is one real machine of `tests/fixtures/fans/corpus/` (48, the machines the first fan sentences were written
from) or `tests/fixtures/fans/corpus-more/` (24, keys `more-…`, never seen when those sentences were written); each
file names its source. Beside what `fanwhy explain` says from the block's capture and its leading finding stands
what the thread established (`[from thread]`) or what a careful reading infers (`[inferred]`).

The judgement is not typed beside the answer: it is what `tests/unit/test_fan_wing.py` checks of the findings, from
expectations derived from each thread's answer (`tests/support/fan_expectations.py`: the finding that must lead,
those that must be found, those that must never be). **agree**: the findings hold what the thread's answer needs;
**partly**: nothing required is missing and nothing forbidden is found, but the thread's cause is beyond what FanWhy
reads or rules (the gap is named); **no answer**: FanWhy refuses the capture (no reading it knows in it), or the
thread itself could not say. A third of the 72 is held out (drawn with a named seed, `held_out()`): no rule is to be
tuned on those machines, and the counts below keep them apart. The fan wing's rules were written before this third
was drawn, in the same change, so for those rules the held-out third is not yet unseen: it is for the rules after.

{counts}

| block | held out | machine | FanWhy says | leads | the answer | judged |
|---|---|---|---|---|---|---|
"""


def cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ").strip()


def verdict(block: Block) -> str:
    expect = EXPECTED[block.key]
    if not block.answer:
        return "no answer in the thread"
    if expect.refused:
        return f"no answer: {expect.gap}"
    return f"partly: {expect.gap}" if expect.gap else "agree"


def table() -> str:
    rows = []
    out_keys = set(held_out([b.key for b in every_block()]))
    with tempfile.TemporaryDirectory() as folder:
        for block in every_block():
            path = Path(folder) / f"{block.key}.txt"
            path.write_text(block.capture)
            out, err = io.StringIO(), io.StringIO()
            if run([path], as_json=True, out=out, err=err) == 0:
                answer = json.loads(out.getvalue())
                said, findings = answer["sentence"], answer["findings"]
                lead = f"{findings[0]['kind']} ({findings[0]['confidence']})" if findings else "-"
            else:
                said, lead = "(refused: " + err.getvalue().split(": ", 2)[-1].strip() + ")", "-"
            thread = f"{block.answer} [{block.established}]" if block.answer else "(nobody can say)"
            held = "seen since" if block.key in SEEN else "yes" if block.key in out_keys else ""
            rows.append(f"| {block.key} | {held} | {cell(block.title)} | "
                        f"{cell(said)} | {lead} | {cell(thread)} | {cell(verdict(block))} |")
    return HEAD.format(counts=counts(out_keys)) + "\n".join(rows) + "\n"


def counts(out_keys: set[str]) -> str:
    """Agreement counted apart for the held-out third, the rest, and the 24 machines of corpus-more."""
    groups = {"the held-out third": [b for b in every_block() if b.key in out_keys and b.key not in SEEN],
              "the other two thirds": [b for b in every_block() if b.key not in out_keys],
              "held out, since seen": [b for b in every_block() if b.key in SEEN],
              "the 24 of corpus-more": [b for b in every_block() if b.key.startswith("more-")],
              "all 72": every_block()}
    lines = []
    for name, group in groups.items():
        answered = [b for b in group if b.answer]
        judged = [verdict(b).split(":")[0] for b in answered]
        agree = judged.count("agree")
        lines.append(f"- {name}: {len(group)} machine{'s' if len(group) != 1 else ''}, {len(answered)} with an "
                     f"answer in the thread: {agree} agree, "
                     f"{judged.count('partly')} partly, {judged.count('no answer')} no answer "
                     f"({100 * agree / len(answered):.0f} % agree)")
    lines += [f"- {key}, held out and since seen: {why}" for key, why in SEEN.items()]
    lines.append("- none is dangerous by the invariants `tests/unit/test_fan_wing.py` checks on every machine (a "
                 "flagged, unreadable or stopped fan never at rest or fine; a placeholder never the hottest reading; "
                 "an embedded controller's fans never sent to a BMC), and none finds what its thread's answer "
                 "forbids (the test fails on either)")
    return "\n".join(lines)


if __name__ == "__main__":
    DOC.write_text(table())
