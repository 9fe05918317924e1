"""Alerts evaluated by the collector on each snapshot: threshold, hold time and hysteresis per GPU.

A GPU's utilization must stay at or above the threshold for ``hold_s`` before the alert fires, and
must fall below ``threshold - hysteresis`` before it resolves, so a value hovering at the threshold
fires once and resolves once.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from app.model import Alert, GpuSample

RULE_GPU_UTILIZATION = "gpu_utilization"


@dataclass
class _GpuState:
    above_since: float | None = None
    firing: Alert | None = None


class AlertEngine:
    """Keeps per-GPU state between ticks; ``evaluate`` is called once per snapshot by the collector."""

    def __init__(self, gpu_util_percent: float = 50.0, hold_s: float = 10.0, hysteresis_percent: float = 5.0):
        self.gpu_util_percent = gpu_util_percent
        self.hold_s = hold_s
        self.hysteresis_percent = hysteresis_percent
        self._states: dict[str, _GpuState] = {}

    def evaluate(self, gpus: Sequence[GpuSample], now: float) -> tuple[tuple[Alert, ...], tuple[Alert, ...]]:
        """Return (alerts firing now, events of this tick: newly fired and newly resolved)."""
        events: list[Alert] = []
        seen = set()
        for gpu in gpus:
            key = gpu.uuid or f"index-{gpu.index}"
            seen.add(key)
            state = self._states.setdefault(key, _GpuState())
            value = gpu.utilization_percent
            if value is None or gpu.error:
                continue  # unknown is not "low": keep the state as it was
            if state.firing is not None:
                if value < self.gpu_util_percent - self.hysteresis_percent:
                    events.append(replace(state.firing, state="resolved", resolved_at=now, value=value,
                                          message=f"GPU {gpu.index} utilization back to {value:.0f} %"))
                    state.firing, state.above_since = None, None
                continue
            if value >= self.gpu_util_percent:
                state.above_since = now if state.above_since is None else state.above_since
                if now - state.above_since >= self.hold_s:
                    state.firing = Alert(
                        id=f"{RULE_GPU_UTILIZATION}:{gpu.index}:{int(state.above_since * 1000)}",
                        rule=RULE_GPU_UTILIZATION, gpu_index=gpu.index, severity="warning",
                        message=(f"GPU {gpu.index} ({gpu.name or 'unnamed'}) at {value:.0f} % utilization, "
                                 f"above {self.gpu_util_percent:g} % for {now - state.above_since:.0f} s"),
                        value=value, threshold=self.gpu_util_percent, since=state.above_since)
                    events.append(state.firing)
            else:
                state.above_since = None
        for key in list(self._states):
            if key not in seen:  # the GPU is gone: its alert cannot stay open
                firing = self._states.pop(key).firing
                if firing is not None:
                    events.append(replace(firing, state="resolved", resolved_at=now,
                                          message=f"GPU {firing.gpu_index} is no longer reported"))
        active = tuple(s.firing for s in self._states.values() if s.firing is not None)
        return active, tuple(events)
