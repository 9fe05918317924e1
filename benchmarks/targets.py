"""The performance targets, in one place: each benchmark judges its results against those it measures, writes the
verdict into its JSON (``targets``) and exits 1 when one is missed. docs/PERFORMANCE.md's targets table words each
target exactly as ``text`` here (``tests/unit/test_benchmark_targets.py`` checks it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Target:
    text: str  # as the docs' targets table says it
    limit: float
    at_most: bool = True  # False: the measure must be at least ``limit``
    gpus: int = 0  # the busy GPUs the target names: a run on fewer measures it but cannot judge it

    def met(self, measured: float) -> bool:
        return measured <= self.limit if self.at_most else measured >= self.limit


FLOOR_FOUR = Target("collector ≤ 1.2 × the raw NVML + psutil floor with four CUDA processes", 1.2)
FLOOR_ONE = Target("collector ≤ 2 × the raw NVML + psutil floor with one CUDA process", 2.0)
NVITOP = Target("collector at least 50 × faster than nvitop", 50.0, at_most=False)
PUSH = Target("p99 push latency ≤ interval + 50 ms (1 s interval)", 1050.0)
COLLECTOR_CPU = Target("collector ≤ 1 % of one core at a 1 s interval", 1.0)
RSS = Target("steady RSS under 100 MB (95.4 MiB) with 200 clients", 100e6 / 2**20)
SERVER_CPU = Target("the whole server ≤ 0.5 % of one core with 4 busy GPUs, one client, history on, 1 s", 0.5,
                    gpus=4)
SERVER_RSS = Target("its worker ≤ 100 MiB meanwhile", 100.0)
ONESHOT = Target("one-shot `fanwhy snapshot` ≤ 1.2 × a minimal NVML + psutil probe (4 GPUs, a load on each)", 1.2,
                 gpus=4)
TOP_FIRST_FRAME = Target("`fanwhy top`: first frame ≤ 300 ms after start", 300.0)
TOP_CPU = Target("`fanwhy top`: ≤ 1 % of one core at a 1 s refresh with 4 busy GPUs, beside nvitop", 1.0, gpus=4)
EXPLAIN_S = Target("`fanwhy explain` of a 4 MiB paste ≤ 10 s", 10.0)
EXPLAIN_MB = Target("and ≤ 200 MB of memory", 200.0)
EVERY = (FLOOR_FOUR, FLOOR_ONE, NVITOP, PUSH, COLLECTOR_CPU, RSS, SERVER_CPU, SERVER_RSS, ONESHOT, TOP_FIRST_FRAME,
         TOP_CPU, EXPLAIN_S, EXPLAIN_MB)


def judged(results: dict[str, Any], measured: list[tuple[Target, float | None]], gpus: int | None = None) -> int:
    """Write each target's verdict into ``results["targets"]``; 1 when one was missed or could not be measured.
    ``gpus``: the busy GPUs of the run. A target naming more GPUs than that (or any, where they were not counted) is
    not judged: ``met`` is null and ``not_judged`` says why. The figure is kept, but a run on one GPU neither meets
    nor misses a target set for four."""
    verdicts = []
    for target, value in measured:
        verdict: dict[str, Any] = {"target": target.text, "limit": target.limit, "at_most": target.at_most,
                                   "measured": value, "met": value is not None and target.met(value)}
        if target.gpus and (gpus is None or gpus < target.gpus):
            ran = "the run did not count its busy GPUs" if gpus is None else f"measured with {gpus} busy GPU(s)"
            verdict.update(met=None, not_judged=f"{ran}; the target names {target.gpus}")
        verdicts.append(verdict)
    results["targets"] = verdicts
    return 1 if any(v["met"] is False for v in verdicts) else 0
