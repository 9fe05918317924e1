"""Alerts evaluated by the collector on each snapshot: per rule and per GPU, with a hold time,
hysteresis and a cooldown.

A value must stay at or above the threshold for ``hold_s`` before the alert fires; it resolves once
the value falls below ``threshold - hysteresis`` (so a value hovering at the threshold fires once
and resolves once); after resolving, the same rule on the same GPU stays quiet for ``cooldown_s``.
XID errors and "a new process started using GPU N" are events: they fire at once; an XID alert stays
active for its cooldown, a new-process alert is a notice only.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, replace
from typing import Any, Callable, Mapping, Sequence

from ..core.fan import Fan
from ..core.model import GpuEvent, GpuSample
from ..core.record import holder, record
from ..core.snapshot import Alert, Snapshot
from ..core.vocabulary import SLOWDOWN_REASONS


@record
class Rule:
    threshold: float
    hold_s: float
    hysteresis: float
    cooldown_s: float
    severity: str
    unit: str
    enabled: bool = True


DEFAULT_RULES: Mapping[str, Rule] = {
    "gpu_utilization": Rule(threshold=50, hold_s=10, hysteresis=5, cooldown_s=60, severity="warning", unit="%"),
    "temperature": Rule(threshold=85, hold_s=10, hysteresis=3, cooldown_s=300, severity="warning", unit="°C"),
    "memory": Rule(threshold=95, hold_s=30, hysteresis=5, cooldown_s=300, severity="warning", unit="%"),
    "power": Rule(threshold=98, hold_s=30, hysteresis=5, cooldown_s=300, severity="info", unit="% of limit"),
    "throttling": Rule(threshold=1, hold_s=5, hysteresis=0.5, cooldown_s=300, severity="critical", unit=""),
    "xid": Rule(threshold=1, hold_s=0, hysteresis=0, cooldown_s=300, severity="critical", unit=""),
    "new_process": Rule(threshold=1, hold_s=0, hysteresis=0, cooldown_s=0, severity="info", unit=""),
    # a fan with an alarm (failed, off its target, at full speed for no heat): 1 while it lasts
    "fan": Rule(threshold=1, hold_s=30, hysteresis=0.5, cooldown_s=300, severity="warning", unit=""),
}
THRESHOLD_RULES = ("gpu_utilization", "temperature", "memory", "power", "throttling")


def _power_percent(gpu: GpuSample) -> float | None:
    if gpu.power_w is None or not gpu.power_limit_w:
        return None
    return 100.0 * gpu.power_w / gpu.power_limit_w


def _throttled(gpu: GpuSample) -> float | None:
    if gpu.throttle_reasons is None:
        return None
    return 1.0 if any(r in SLOWDOWN_REASONS for r in gpu.throttle_reasons) else 0.0


VALUES: Mapping[str, Callable[[GpuSample], float | None]] = {
    "gpu_utilization": lambda g: g.utilization_percent,
    "temperature": lambda g: g.temperature_c,
    "memory": lambda g: g.memory_percent,
    "power": _power_percent,
    "throttling": _throttled,
}


def _message(rule: str, gpu: GpuSample, value: float, threshold: float, held: float) -> str:
    name = f"GPU {gpu.index} ({gpu.name or 'unnamed'})"
    if rule == "gpu_utilization":
        return f"{name} at {value:.0f} % utilization, above {threshold:g} % for {held:.0f} s"
    if rule == "temperature":
        return f"{name} at {value:.0f} °C, above {threshold:g} °C for {held:.0f} s"
    if rule == "memory":
        return f"{name} memory {value:.0f} % full, above {threshold:g} % for {held:.0f} s"
    if rule == "power":
        return f"{name} at {value:.0f} % of its power limit for {held:.0f} s"
    reasons = ", ".join(r for r in (gpu.throttle_reasons or ()) if r in SLOWDOWN_REASONS)
    return f"{name} is throttled ({reasons}) for {held:.0f} s"


def _resolved_message(rule: str, gpu_index: int | None, value: float | None) -> str:
    shown = f"{value:.0f}" if value is not None else "?"
    return {
        "gpu_utilization": f"GPU {gpu_index} utilization back to {shown} %",
        "temperature": f"GPU {gpu_index} cooled to {shown} °C",
        "memory": f"GPU {gpu_index} memory back to {shown} %",
        "power": f"GPU {gpu_index} power back to {shown} % of its limit",
        "throttling": f"GPU {gpu_index} is no longer throttled",
        "xid": f"GPU {gpu_index}: no new XID error",
    }.get(rule, f"GPU {gpu_index}: {rule} resolved")


# The causes that answer each rule's question, in the order they are looked for: what keeps a GPU busy answers its
# utilization, memory and power (a card throttled for heat is still busy because of its process); heat answers its
# temperature and its throttling. A rule with none of its kinds among the causes takes the verdict's leading one.
RULE_WHY: dict[str, tuple[str, ...]] = {
    "gpu_utilization": ("gpu_load",), "memory": ("gpu_load",), "power": ("gpu_load", "power_cap"),
    "temperature": ("thermal_throttle", "gpu_load"), "throttling": ("thermal_throttle", "power_cap", "gpu_load")}


def _causes(snap: Snapshot) -> dict[str, list[tuple[str, str]]]:
    """The verdict's causes (kind, sentence) for each GPU and each fan, the leading one first."""
    found: dict[str, list[tuple[str, str]]] = {}
    for cause in (snap.verdict.causes if snap.verdict else ()):
        fan = cause.numbers.get("fan") if cause.kind in ("fan", "fan_fault") else None
        if isinstance(fan, str):
            found.setdefault(f"fan:{fan}", []).append((cause.kind, cause.summary))
        elif cause.gpu_index is not None and cause.kind not in ("memory_holder", "fan", "fan_fault"):
            found.setdefault(f"gpu:{cause.gpu_index}", []).append((cause.kind, cause.summary))
    return found


def _why(causes: dict[str, list[tuple[str, str]]], key: str, rule: str | None = None) -> str | None:
    """The sentence of the cause that answers ``rule`` for ``key`` (a GPU, a fan), else of its leading cause."""
    found = causes.get(key, [])
    for kind in RULE_WHY.get(rule or "", ()):
        summary = next((said for of, said in found if of == kind), None)
        if summary is not None:
            return summary
    return found[0][1] if found else None


def _with_why(message: str, why: str | None) -> str:
    """``message`` and, when the verdict has one, its cause: "... for 3 s. Why: GPU 0 is at ... because ..."."""
    if not why or why in message:
        return message
    return f"{message}. Why: {why}"


RuleValue = float | bool | str  # a field of a Rule as FANWHY_ALERTS sets it


def parse_overrides(text: str) -> dict[str, dict[str, RuleValue]]:
    """``temperature.threshold=80,power.enabled=0`` -> {"temperature": {"threshold": 80.0}, ...}."""
    overrides: dict[str, dict[str, RuleValue]] = {}
    fields: dict[str, Callable[[str], RuleValue] | None] = {
        "threshold": float, "hold": float, "hysteresis": float, "cooldown": float, "enabled": None, "severity": str}
    for item in filter(None, (p.strip() for p in text.replace(";", ",").split(","))):
        key, sep, raw = item.partition("=")
        rule, dot, field_name = key.strip().partition(".")
        if not sep or not dot or rule not in DEFAULT_RULES or field_name not in fields:
            raise ValueError(f"bad alert setting {item!r}: expected RULE.FIELD=VALUE with RULE in "
                             f"{', '.join(DEFAULT_RULES)} and FIELD in {', '.join(fields)}")
        convert = fields[field_name]
        try:
            value: RuleValue = (raw.strip().lower() in ("1", "true", "yes", "on")) if convert is None else convert(raw)
        except ValueError:
            raise ValueError(f"bad alert setting {item!r}: {raw!r} is not a number") from None
        name = {"hold": "hold_s", "cooldown": "cooldown_s"}.get(field_name, field_name)
        overrides.setdefault(rule, {})[name] = value
    return overrides


def build_rules(overrides: Mapping[str, Mapping[str, RuleValue]] | None = None) -> dict[str, Rule]:
    rules = dict(DEFAULT_RULES)
    for name, changes in (overrides or {}).items():
        fields: dict[str, Any] = dict(changes)  # parse_overrides gave each field its type
        rules[name] = replace(rules[name], **fields)
    return rules


@holder
class _State:
    above_since: float | None = None
    firing: Alert | None = None
    quiet_until: float = float("-inf")


class AlertEngine:
    """Keeps state between ticks; ``evaluate`` is called once per snapshot by the collector."""

    def __init__(self, rules: Mapping[str, Rule] | None = None, history: int = 500):
        self.rules = dict(rules or DEFAULT_RULES)
        self._states: dict[tuple[str, str], _State] = {}
        self._known_users: set[tuple[int, int, float | None]] | None = None
        self.history: deque[Alert] = deque(maxlen=history)
        self.recent: tuple[Alert, ...] = ()
        self._why: dict[str, list[tuple[str, str]]] = {}  # the verdict's causes per GPU ("gpu:0") and fan, this tick

    def describe(self) -> dict[str, dict[str, RuleValue]]:
        return {name: asdict(rule) for name, rule in self.rules.items()}

    def evaluate(self, snap: Snapshot, now: float, events: Sequence[GpuEvent] = ()
                 ) -> tuple[tuple[Alert, ...], tuple[Alert, ...]]:
        """Return (alerts firing now, events of this tick: newly fired and newly resolved). A fired alert's message
        ends with the verdict's cause for its GPU or fan at that moment (the process, user, container, GPU), so the
        one message a person reads when away says why."""
        self._why = _causes(snap)
        fired: list[Alert] = []
        seen = set()
        for gpu in snap.gpus:
            key = gpu.uuid or f"index-{gpu.index}"
            seen.add(key)
            if gpu.error:
                continue  # unknown is not "low": keep each rule's state as it was
            for name in THRESHOLD_RULES:
                rule = self.rules[name]
                if rule.enabled:
                    self._threshold(name, rule, gpu, key, now, fired)
        if self.rules["fan"].enabled:
            for fan in snap.fans:
                if fan.state != "dead":
                    seen.add(f"fan:{fan.id}")
                    self._fan(fan, now, fired)
        for event in events:
            self._xid(event, snap, now, fired)
        self._expire_events(now, fired)
        self._new_processes(snap, now, fired)
        for (name, key), state in list(self._states.items()):
            if key not in seen and state.firing is not None and name != "xid":
                gone = key[4:] if key.startswith("fan:") else f"GPU {state.firing.gpu_index}"
                fired.append(replace(state.firing, state="resolved", resolved_at=now,
                                     message=f"{gone} is no longer reported"))
                del self._states[(name, key)]
        if fired:
            self.history.extend(fired)
            self.recent = tuple(self.history)  # an immutable copy for readers on other threads
        active = tuple(s.firing for s in self._states.values() if s.firing is not None)
        return active, tuple(fired)

    def _threshold(self, name: str, rule: Rule, gpu: GpuSample, key: str, now: float, out: list[Alert]) -> None:
        value = VALUES[name](gpu)
        if value is not None:
            self._level(name, rule, key, gpu.index, value, now, out,
                        lambda held: _with_why(_message(name, gpu, value, rule.threshold, held),
                                               _why(self._why, f"gpu:{gpu.index}", name)),
                        lambda: _resolved_message(name, gpu.index, value))

    def _fan(self, fan: Fan, now: float, out: list[Alert]) -> None:
        """A fan's alarm, held and resolved like a threshold (1 while the alarm lasts)."""
        self._level("fan", self.rules["fan"], f"fan:{fan.id}", fan.gpu_index, 1.0 if fan.alarm else 0.0, now, out,
                    lambda held: _with_why(f"{fan.name}: {fan.alarm} (for {held:.0f} s)",
                                           _why(self._why, f"fan:{fan.id}")),
                    lambda: f"{fan.name} is back to normal ({fan.speed}, {fan.state})")

    def _level(self, name: str, rule: Rule, key: str, index: int | None, value: float, now: float, out: list[Alert],
               message: Callable[[float], str], resolved: Callable[[], str]) -> None:
        """Hold, fire, resolve below the hysteresis, then stay quiet for the cooldown."""
        state = self._states.setdefault((name, key), _State())
        if state.firing is not None:
            if value < rule.threshold - rule.hysteresis:
                out.append(replace(state.firing, state="resolved", resolved_at=now, value=round(value, 2),
                                   message=resolved()))
                state.firing, state.above_since = None, None
                state.quiet_until = now + rule.cooldown_s
            return
        if value < rule.threshold:
            state.above_since = None
            return
        state.above_since = now if state.above_since is None else state.above_since
        if now - state.above_since >= rule.hold_s and now >= state.quiet_until:
            scope = key.removeprefix("fan:") if name == "fan" else index
            state.firing = Alert(
                id=f"{name}:{scope}:{int(state.above_since * 1000)}", rule=name, gpu_index=index,
                severity=rule.severity, message=message(now - state.above_since),
                value=round(value, 2), threshold=rule.threshold, since=state.above_since)
            out.append(state.firing)

    def _xid(self, event: GpuEvent, snap: Snapshot, now: float, out: list[Alert]) -> None:
        rule = self.rules["xid"]
        if not rule.enabled:
            return
        gpu = snap.gpu(event.gpu_index) if event.gpu_index is not None else None
        key = (gpu.uuid if gpu and gpu.uuid else f"index-{event.gpu_index}")
        state = self._states.setdefault(("xid", key), _State())
        alert = Alert(id=f"xid:{event.gpu_index}:{int(event.timestamp * 1000)}:{event.value}", rule="xid",
                      gpu_index=event.gpu_index, severity=rule.severity, value=float(event.value), threshold=None,
                      since=event.timestamp,
                      message=_with_why(f"GPU {event.gpu_index} reported XID {event.value}: a driver-level GPU error "
                                        f"(see NVIDIA's XID catalogue)", _why(self._why, f"gpu:{event.gpu_index}"))
                      if event.kind == "xid" else
                      f"GPU {event.gpu_index} reported {event.kind.replace('_', ' ')} (amdsmi event)")
        state.firing, state.quiet_until = alert, now + rule.cooldown_s
        out.append(alert)

    def _expire_events(self, now: float, out: list[Alert]) -> None:
        for (name, _key), state in self._states.items():
            if name == "xid" and state.firing is not None and now >= state.quiet_until:
                out.append(replace(state.firing, state="resolved", resolved_at=now,
                                   message=_resolved_message("xid", state.firing.gpu_index, None)))
                state.firing = None

    def _new_processes(self, snap: Snapshot, now: float, out: list[Alert]) -> None:
        users = {(u.gpu_index, p.pid, p.start_time) for p in snap.processes for u in p.gpus}
        previous, self._known_users = self._known_users, users
        rule = self.rules["new_process"]
        if previous is None or not rule.enabled:
            return  # the first tick is the baseline: what runs at start is not "new"
        by_pid = {p.pid: p for p in snap.processes}
        for gpu_index, pid, start in sorted(users - previous, key=lambda u: (u[0], u[1])):
            proc = by_pid[pid]
            name = proc.name or f"PID {pid}"
            owner = f" ({proc.user})" if proc.user else ""
            out.append(Alert(id=f"new_process:{gpu_index}:{pid}:{int((start or now) * 1000)}", rule="new_process",
                             gpu_index=gpu_index, severity=rule.severity, value=float(pid), threshold=None, since=now,
                             message=f"A new process started using GPU {gpu_index}: {name}{owner}"
                                     + (f", PID {pid}" if proc.name else "")))
