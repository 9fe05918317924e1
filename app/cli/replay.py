"""``fanwhy explain FILE...``: the fan part of the verdict for a machine that is not this one, from captured text.

The files (one machine's: a ``sensors -j`` and its fancontrol configuration combine) are written back into an hwmon
tree and an etc folder (app.collect.captures) and read by the live readers: the fan table and the sentence are what
FanWhy would say on that machine, without its processes (a capture has none, and the answer says so).
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import TextIO

from ..collect.captures import Replay, Unreadable, load, text_of
from ..collect.fandaemons import curves
from ..collect.fans import FanService
from ..collect.registry import registered
from ..collect.serialize import to_json
from ..core.cells import shown, wrap
from ..core.fan import Note
from ..core.finding import Finding
from ..core.model import HostSample
from ..core.scratch import scratch
from ..core.snapshot import BackendInfo, CollectorTiming, Snapshot
from ..fans import adapt, read
from ..fans.alarm_words import state_word
from ..fans.answer import findings
from ..fans.chips import chip
from ..fans.facts import Decision, FanFact, Level, Machine, Reading
from ..fans.names import Names
from ..fans.read import (
    fan2go,
    ghelper,
    hddfc,
    i8k,
    idracfc,
    ipmiraw,
    legion,
    msiec,
    nbfc,
    nvmlgpucontrol,
    platform,
    smfc,
    smilimits,
    tegra,
)
from ..fans.read.bmcsettings import settings
from ..fans.read.columns import perf_levels
from ..fans.read.daemonlog import calibrations, decisions, events
from ..fans.read.kernlog import claims
from ..fans.read.kernlog import events as heat_log
from ..fans.read.probes import probes
from ..fans.read.profiles import fixed, named, profiles
from ..fans.read.sel import events as bmc_log
from ..fans.rules_daemon import driven
from ..fans.words import answer as worded
from ..verdict.notes import note_words
from .replay_work import listed, work_said
from .terminal import UNCUT, Cell, fan_table, table, terminal_width

# Formats whose named reader knows what each field means (a card's target beside its speed, a level beside its
# RPM; a daemon's JSON configuration, whose curve points are no readings): their files are not read again by the
# general reader, whose facts would count those fields as fans.
NAMED_ONLY = ("amdgpu-ls", "nvidia-smi", "nvidia-settings", "/proc/acpi/ibm/fan",
              "fw-fanctrl configuration")
NOT_READ = "not a capture FanWhy reads: no fan, pump, speed or temperature reading was found in it"


def _why_not(path: Path) -> str:
    """What a refused file looks like, where that helps: a JSON document that is not whole (cut before its first
    whole reading)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(64).lstrip()
    except OSError:
        return ""
    # an object, or an array of objects, arrays or strings ("[ 8812.11] mce: ..." is a kernel log's time stamp)
    return " (it starts as JSON but is not whole JSON: cut short before its first whole reading?)" \
        if head[:1] == b"{" or re.match(rb"\[\s*[\[{\"]", head) else ""


def fact_table(machine: Machine, found: list[Finding], room: int) -> list[str]:
    """The fans as the fan wing read them, where its words answer: each fan's raw speed, its duty, and what was
    found of it (the strongest finding about it, in a word), in ``room`` cells."""
    names = Names(machine)
    rows: list[list[Cell]] = []
    for fan in machine.fans:
        speed = f"{fan.rpm:.0f} RPM" if fan.rpm is not None else fan.raw or "-"  # "300.000 RPM" as read: 300 RPM
        rows.append([shown(names(fan.key)), shown(speed),
                     f"{fan.duty_percent:.0f} %" if fan.duty_percent is not None else "-", found_word(fan, found)])
    return table(["FAN", "SPEED", "DUTY", "FOUND"], rows, frozenset({1, 2}), room, (0, 1)) if rows else []


FACT_FIELDS = ("key", "chip", "label", "rpm", "raw", "invalid", "duty_percent", "target_percent", "controller",
               "status", "fault", "pump")  # what the fan wing read of each fan, as the text's fact table shows it


def found_word(fan: FanFact, found: list[Finding]) -> str:
    """The word of the strongest finding about ``fan`` (the fact table's FOUND), "" where none is about it."""
    about = next((f for f in found if fan.key in f.subjects and f.kind != "hottest"), None)
    return state_word(about, fan) if about is not None else ""


def fan_fact_json(fan: FanFact, found: list[Finding]) -> dict[str, object]:
    """One fan as the fan wing read it, with the word of the strongest finding about it."""
    return {**{name: getattr(fan, name) for name in FACT_FIELDS}, "found": found_word(fan, found)}


def finding_json(found: Finding) -> dict[str, object]:
    return {"kind": found.kind, "rule": found.rule, "subjects": list(found.subjects), "confidence": found.confidence,
            "priority": found.priority, "facts": dict(found.facts)}


EXPLAIN_PREFIX = "fanwhy-explain-"  # its scratch folders: the capture's tree, made again from the text
# standard input, kept for reading as the file "stdin" in a scratch folder of explain's own: named as what it is
_STDIN_KEPT = re.compile(rf"\S*/{EXPLAIN_PREFIX}\d+-[0-9a-z_]+/stdin\b")


def _named(message: str) -> str:
    """A message about a file, standard input named as such rather than by the scratch path it was kept at."""
    return _STDIN_KEPT.sub("standard input", message)


def replayed(paths: list[Path], strict: bool = True) -> tuple[Snapshot, Replay]:
    """The snapshot a machine's captures make (its fans and temperatures) and what each file was read as (a file
    none of the named readers knows: ``Unreadable``, or listed in ``Replay.unread`` without ``strict``)."""
    with scratch(EXPLAIN_PREFIX) as folder:
        replay = load(paths, folder, strict)
        listing = replay.bmc
        liquid = replay.liquidctl
        service = FanService(sys_root=str(replay.sys_root), etc_root=str(replay.etc_root), etc_said="in the paste",
                             bmc_run=(lambda: listing) if listing else "no ipmitool listing in the captures",
                             bmc_every_s=3600.0, every_s=0,
                             extra=registered(replay.proc_root, replay.sys_root,
                                              (lambda: liquid) if liquid else None))
        service.wait_first(10.0)
        replay.curves = curves(replay.etc_root)  # read while the configurations are still there
        temperatures, left_out = service.temperatures()
        host = HostSample(hostname="(a capture)", cpu_percent=None, cpu_count=None, load_average=None,
                          memory_used_bytes=None, memory_total_bytes=None, temperatures=temperatures,
                          unsupported={f"temperature {name}": why for name, why in left_out.items()})
        fans, air = service.read(replay.gpus, host)
        service.close()
        snap = Snapshot(timestamp=time.time(), backend=BackendInfo(name="replay"), host=host, gpus=tuple(replay.gpus),
                        processes=(),
                        timing=CollectorTiming(0.0, 0.0, 0.0, 0.0, 0.0, 0), fans=fans, air=air)
        return snap, replay


def answer(snap: Snapshot, notes: list[Note], found: list[Finding] | None = None,
           machine: Machine | None = None) -> tuple[str, list[str]]:
    """The sentence and the other causes for a replay: what the captures show was done to the control first (a
    refused curve, a failed set, a daemon's log: it answers the question where it is there), then the fan wing's
    findings in words."""
    sentence, also = worded(found, machine) if found and machine is not None else ("", [])
    sentence = sentence or "No fan is read in these captures."
    said = note_words(notes, snap)
    if not said:
        return sentence, also
    if not any(f.state != "dead" for f in snap.fans) and not (found and found[0].cause):
        return " ".join(said), also  # "no fan is read here" would deny the fan the notes name
    return " ".join([*said, sentence]), also


def _wing_table(snap: Snapshot, found: list[Finding], machine: Machine) -> bool:
    """The fan wing's table of facts where its strongest finding is a cause, where the named readers read nothing,
    or where they read no fan that turns and the wing did; else the named readers' table (speed, duty, floor, what
    each fan follows)."""
    named = bool(snap.fans or snap.gpus or snap.air or snap.host.temperatures)
    fanless = not any(f.state != "dead" for f in snap.fans) and not snap.gpus and \
        any(f.rpm or f.duty_percent for f in machine.fans)
    return found[0].cause or not named or fanless


def facts(paths: list[Path], snap: Snapshot, replay: Replay) -> tuple[Machine, list[str], list[str]]:
    """The fan wing's facts of the captures (their text read by the general reader, then the named readers' records
    of what the text did not name), what each file unread by the named readers was read as, and the texts read."""
    readings: list[Reading] = []
    kinds: list[str] = []
    steps: list[Decision] = []
    levels: list[Level] = []
    texts: list[str] = []
    whole = Machine()  # what each text says of the control as a whole: calibrations, settings, a daemon's exit
    for path in paths:
        named = next((k for k in replay.kinds if k.startswith(f"{path.name}: ")), "")
        text = replay.texts.get(path) or text_of(path)
        texts.append(text)
        logged, declared = decisions(text)  # a daemon's log beside a tool's own listing is read all the same
        logged += nvmlgpucontrol.decisions(text) + smfc.decisions(text) + hddfc.decisions(text) + \
            i8k.decisions(text) + fan2go.decisions(text) + idracfc.decisions(text) + ipmiraw.decisions(text)
        steps += logged
        levels += declared
        controls = settings(text) + idracfc.settings(text) + ipmiraw.settings(text) + perf_levels(text) + \
            nbfc.settings(text) + msiec.settings(text) + legion.settings(text) + platform.settings(text) + \
            smilimits.settings(text)
        of_text = Machine(calibrations=calibrations(text), settings=controls,
                          events=events(text) + tegra.events(text),
                          bmc_events=bmc_log(text), heat_events=heat_log(text), claims=claims(text),
                          probes=probes(text))
        whole = replace(whole, calibrations=whole.calibrations + of_text.calibrations,
                        settings=whole.settings + of_text.settings, events=whole.events + of_text.events,
                        bmc_events=whole.bmc_events + of_text.bmc_events,
                        heat_events=whole.heat_events + of_text.heat_events, claims=whole.claims + of_text.claims,
                        probes=whole.probes + of_text.probes)
        if any(tool in named for tool in NAMED_ONLY):
            continue  # a tool's own format, read with its meaning by its own reader: not read again as labels
        found, kind = read.read(text)
        readings += found
        said = _read_as(kind, adapt.machine(found), logged, of_text, text) if path in replay.unread else None
        if said is not None:
            kinds.append(f"{path.name}: {said}")
    machine = adapt.machine(readings, snap.fans, snap.host.temperatures, snap.gpus, replay.curves, steps, levels,
                            snap.air)
    machine = replace(machine, calibrations=whole.calibrations, settings=whole.settings, events=whole.events,
                      bmc_events=whole.bmc_events, heat_events=whole.heat_events, claims=whole.claims,
                      probes=whole.probes,
                      curves=(*machine.curves, *(c for text in texts for c in ghelper.curves(text))))
    return with_profiles(machine, texts), kinds, texts


def _read_as(kind: str | None, alone: Machine, logged: tuple[Decision, ...], of_text: Machine,
             text: str) -> str | None:
    """What a file the named readers did not read was read as by the general reader, a daemon's log, a measured
    calibration, a BMC's settings or a daemon's exit; None where nothing in it was read."""
    if kind is not None and (alone.fans or alone.temperatures or alone.gpus):
        return kind
    if logged:
        return f"a fan daemon's log ({logged[0].daemon})"
    if named(text) is not None:
        return "liquidctl's speed profile (its command, or its log of what it sent)"
    if ghelper.curves(text):
        return "G-Helper's log (the fan curves it gave the firmware)"
    if of_text.calibrations:
        return "pwmconfig's test" if of_text.calibrations[0].uncorrelated else "a fan daemon's log (fan2go)"
    if of_text.settings:
        return f"the {of_text.settings[0].controller}'s settings"
    if any("fan" in e.sensor_type.lower() for e in of_text.bmc_events):  # a log of a fan's events: the rules read
        return "a BMC's event log (ipmitool sel)"
    if of_text.heat_events:
        return "the kernel's log (a part acting for heat)"
    if of_text.claims:
        return "the kernel's log (a sensor chip its firmware claims)"
    if of_text.probes:
        return "sensors-detect's summary (the sensor chips it found)" if of_text.probes[0].tool == "sensors-detect" \
            else "sensors' answer (no sensor chip found)"
    return f"a fan daemon's log ({of_text.events[0].daemon})" if of_text.events else None


def with_profiles(machine: Machine, texts: list[str]) -> Machine:
    """``machine`` with the speed profiles its captures set on its one cooler (liquidctl's ``set ... speed``), the
    channels they drive held by them rather than by the cooler's firmware; a channel set to one duty is held there
    by hand (asked for it), a pump with the floor its driver will not send less than."""
    coolers = {f.chip for f in machine.fans if chip(f.chip).kind == "aio"}
    cooler = next(iter(coolers)) if len(coolers) == 1 else None
    if not coolers:  # no cooler's listing: the one liquidctl's command or log names, its channels unread
        cooler = next((name for text in texts if (name := named(text)) is not None), None)
    set_on = [c for text in texts for c in profiles(text, cooler)]
    duties = dict(d for text in texts for d in fixed(text, cooler))
    if not set_on and not duties:
        return machine
    machine = replace(machine, curves=(*machine.curves, *set_on))
    held = {f.key for c in set_on if (f := driven(machine, c)) is not None}
    return replace(machine, fans=tuple(_fixed(f, duties) if f.chip == cooler and _channel(f) in duties else
                                       replace(f, controller="daemon") if f.key in held else f for f in machine.fans))


def _channel(fan: FanFact) -> str:
    """A cooler's fan as liquidctl's commands name its channel ("Fan 1" is ``fan1``, "Pump" ``pump``)."""
    return fan.label.lower().replace(" ", "")


def _fixed(fan: FanFact, duties: dict[str, float]) -> FanFact:
    floor = chip(fan.chip).pump_floor_percent if fan.pump else None
    return replace(fan, controller="manual", target_percent=duties[_channel(fan)],
                   floor_percent=floor if floor is not None else fan.floor_percent)


def run(paths: list[Path], as_json: bool = False, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Print the fans and the sentence for the captures in ``paths``: 0, or 2 with one line for a file it cannot
    read."""
    try:
        snap, replay = replayed(paths, strict=False)
        machine, general, texts = facts(paths, snap, replay)
    except Unreadable as error:
        err.write(f"fanwhy explain: {_named(shown(error))}\n")
        return 2
    unread = [p for p in replay.unread if not any(k.startswith(f"{p.name}: ") for k in general)]
    if unread:
        err.write(_named(f"fanwhy explain: {shown(unread[0])}: {NOT_READ}{_why_not(unread[0])}\n"))
        return 2
    found = findings(machine)
    sentence, also = answer(snap, replay.notes, found, machine)
    rows = listed(texts)
    work = work_said(rows, snap.gpus, machine.loads)
    wing = bool(found) and _wing_table(snap, found, machine)
    kinds = replay.kinds + general
    if as_json:
        out.write(json.dumps({"sentence": sentence, "also": also, "processes": work, "read_as": kinds,
                              "findings": [finding_json(f) for f in found],
                              "fans": to_json(list(snap.fans)), "air": to_json(list(snap.air)),
                              "fan_facts": [fan_fact_json(f, found) for f in machine.fans],
                              "notes": [{"kind": n.kind, **n.facts} for n in replay.notes],
                              "temperatures": to_json(list(snap.host.temperatures)),
                              "left_out": dict(snap.host.unsupported),
                              "gpu_processes": [asdict(p) for p in rows or ()],
                              "gpu_loads": [asdict(load) for load in machine.loads]}) + "\n")
        return 0
    room = terminal_width()

    def prose(text: str, indent: str = "  ") -> list[str]:  # wrapped to the terminal; whole into a pipe
        return [text] if room >= UNCUT else wrap(text, room, indent=indent)

    lines = [*prose(shown(sentence).replace("`", ""), ""),
             *(line for a in also for line in prose("  · " + shown(a).replace("`", ""), "    ")),
             *prose(shown(work).replace("`", "")), ""]
    fans = fact_table(machine, found, room) if wing else fan_table(snap.fans, room) or fact_table(machine, found, room)
    lines += fans or ["No fan is read in these captures."]
    lines.append("")
    for name, why in snap.host.unsupported.items():
        lines += prose(f"Left out: {shown(name)}: {shown(why)}")
    lines += prose("Read as: " + shown("; ".join(kinds)))
    out.write("\n".join(lines) + "\n")
    return 0
