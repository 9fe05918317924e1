"""One test per block of the fan corpus (48 real machines), through ``fanwhy explain``: what must be true of FanWhy's
answer for that machine (tests/support/corpus_judgement.py), and whether it agrees with the thread's answer."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from app.cli.replay import run
from tests.support.corpus import blocks
from tests.support.corpus_judgement import JUDGED, NOT_A_CAPTURE
from tests.support.fan_expectations import EXPECTED

BLOCKS = {b.key: b for b in blocks()}


def test_every_block_is_judged() -> None:
    assert sorted(JUDGED) == sorted(BLOCKS)
    assert all(j.verdict in ("no answer", "not read") for k, j in JUDGED.items() if BLOCKS[k].answer is None)


@pytest.mark.parametrize("key", sorted(BLOCKS))
def test_the_block(key: str, tmp_path: Path) -> None:
    judged = JUDGED[key]
    path = tmp_path / f"{key}.txt"
    path.write_text(BLOCKS[key].capture)
    out, err = io.StringIO(), io.StringIO()
    code = run([path], as_json=True, out=out, err=err)
    if judged.verdict == "not read":  # read one day: then it is judged again
        assert code == 2 and NOT_A_CAPTURE in err.getvalue(), "now read: judge it in tests/support/corpus_judgement.py"
        return
    assert code == 0, err.getvalue()
    answer = json.loads(out.getvalue())
    said = " ".join([answer["sentence"], *answer["also"]]).lower()
    for words in () if key in EXPECTED else judged.says:  # where the fan wing leads, its findings are judged
        assert words.lower() in said, (words, answer["sentence"])
    states = {f["name"]: f["state"] for f in answer["fans"]}
    for name, state in judged.states.items():
        assert states.get(name) == state, (name, states)
    for name in judged.left_out:
        assert f"temperature {name}" in answer["left_out"], (name, answer["left_out"])
    kept = {f"{t['chip']} {t['label']}" for t in answer["temperatures"]}
    assert not kept & set(judged.left_out)
