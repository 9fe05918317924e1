"""One tick, one story: the verdict never contradicts the data it was made from. Checked on the simulated demo
(several ticks of a machine under a changing load) and on every corpus block FanWhy reads, and on the cases that
once broke it: a process holding memory at 0 % SM, a process at work while its card reports little."""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

from app.cli.replay import run
from app.collect.settings import Settings
from app.core.fan import Fan
from app.core.snapshot import Snapshot
from app.verdict.explain import BUSY_UTIL_PERCENT, explain
from tests.support.builders import gpu, proc, snap
from tests.support.corpus import blocks
from tests.support.corpus_judgement import JUDGED


def contradictions(shot: Snapshot) -> list[str]:
    """What the verdict of ``shot`` says that its own data does not back."""
    verdict = shot.verdict or explain(shot)
    found = []
    said = [verdict.headline, *(c.summary or "" for c in verdict.causes)]
    for fan in shot.fans:
        for text in said:
            named = re.search(rf"The {re.escape(fan.name)} (?:runs at|reads|at) ", text)
            if named and not text[named.end():].startswith(fan.speed):
                found.append(f"{fan.name}: {text[named.start():named.end() + 30]!r} but its speed is {fan.speed}")
    for match in re.finditer(r"GPU (\d+) draws \d+ W and no process on it is known", " ".join(said)):
        index = int(match.group(1))
        if any(u.gpu_index == index for p in shot.processes for u in p.gpus):
            found.append(f"GPU {index}: 'no process on it is known' while the answer lists one on it")
    if verdict.headline.startswith("Nothing is busy"):
        busy = [p.pid for p in shot.processes for u in p.gpus if (u.sm_percent or 0) >= BUSY_UTIL_PERCENT]
        if busy:
            found.append(f"'Nothing is busy' beside busy PIDs {busy}")
    for card in shot.gpus:  # one fan list: a card's fans are the explained ones, not a raw copy beside them
        found.extend(f"GPU {card.index}: {fan.id} is a copy ({fan.state}) of none of the snapshot's fans"
                     for fan in card.fans if fan not in shot.fans)
    fan_causes = [c.summary for c in verdict.causes if c.kind in ("fan", "fan_fault")]
    if verdict.headline.startswith(("GPU", "The")) and " fan" in verdict.headline and fan_causes and \
            not any(verdict.headline == s for s in fan_causes) and "fan" in verdict.headline.split(":")[0]:
        found.append(f"a fan headline that is none of its fan causes: {verdict.headline!r}")
    return found


def test_the_demo_tells_one_story_tick_after_tick() -> None:
    from app.collect.assemble import build_collector

    collector = build_collector(Settings(db="none", backend="simulated", interval_s=0.2))
    try:
        stories = []
        for _ in range(25):
            frame = collector.collect()
            assert frame is not None
            stories.append(frame.snapshot)
        problems = [p for shot in stories for p in contradictions(shot)]
        assert problems == []
        assert any(shot.fans for shot in stories) and any(shot.verdict and shot.verdict.busy for shot in stories)
    finally:
        collector.stop()


@pytest.mark.parametrize("block", [b for b in blocks() if JUDGED[b.key].verdict != "not read"], ids=lambda b: b.key)
def test_every_corpus_answer_names_each_fan_at_the_speed_its_table_shows(block, tmp_path: Path) -> None:
    path = tmp_path / "capture.txt"
    path.write_text(block.capture)
    out, err = io.StringIO(), io.StringIO()
    assert run([path], as_json=True, out=out, err=err) == 0, err.getvalue()
    answer = json.loads(out.getvalue())
    speeds = {f["name"]: _spoken(f["rpm"], f["percent"]) for f in answer["fans"]}
    for text in (answer["sentence"], *answer["also"]):
        for name, spoken in speeds.items():
            named = re.search(rf"The {re.escape(name)} (?:runs at|reads|is at|at) ", text)
            if named:
                assert text[named.end():].startswith(spoken), (name, spoken, text)


def _spoken(rpm: int | None, percent: float | None) -> tuple[str, ...]:
    """How a fan's speed may be said: as the fan table writes it ("19 % (1,472 RPM)"), or as the fan wing's words
    do ("1,472 RPM (19 % duty)", "51 % duty")."""
    table = Fan(id="x", chip="c", channel=0, label=None, rpm=rpm, percent=percent).speed
    duty = f"{percent:.0f} % duty" if percent is not None else ""
    wing = f"{rpm:,} RPM" + (f" ({duty})" if duty else "") if rpm is not None else duty
    return (table, wing) if wing else (table,)


def test_a_process_holding_memory_at_0_sm_is_named_present_and_idle() -> None:
    """GPU 0's fan runs loud while the only process on it holds 6 GiB and computes nothing: the answer names it
    as present and idle, never "no process on it is known"."""
    fans = (Fan(id="nvml:0/fan0", chip="GPU 0", channel=0, label=None, percent=80.0, floor_percent=30.0,
                gpu_index=0, source="GPU 0", source_from="design", control="automatic", controller="the card",
                cools="the GPU", state="running"),)
    card = replace(gpu(0, util=1, temp=71, power=95, fan=80), fans=fans)  # the card's fan is the explained one
    holder = proc(4242, "python3 serve.py", sm=0, memory=6 << 30, cpu=0)
    shot = snap([card], [holder])
    shot = Snapshot(**{**shot.__dict__, "fans": fans, "verdict": None})
    verdict = explain(shot)
    assert "no process on it is known" not in verdict.headline
    assert "`python3 serve.py` (alice) on it keeps its SMs idle" in verdict.headline, verdict.headline
    assert contradictions(shot) == []


def test_never_nothing_is_busy_beside_a_process_at_work() -> None:
    """The card's utilization and a process's SM share are sampled over different windows: on a job's first
    seconds the card may report 3 % while the process shows 60 %."""
    card = gpu(0, util=3, temp=38, power=60, fan=30)
    worker = proc(777, "python3 train.py", sm=60, memory=8 << 30, cpu=90)
    verdict = explain(snap([card], [worker]))
    assert not verdict.headline.startswith("Nothing is busy"), verdict.headline
    assert verdict.headline.startswith("`python3 train.py` (alice) keeps 60 % of GPU 0's SMs busy while the card "
                                       "reports 3 %")
