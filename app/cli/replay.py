"""``fanwhy explain FILE...``: the fan part of the verdict for a machine that is not this one, from captured text.

The files (one machine's: a ``sensors -j`` and its fancontrol configuration combine) are written back into an hwmon
tree and an etc folder (app.collect.captures) and read by the live readers: the fan table and the sentence are what
FanWhy would say on that machine, without its processes (a capture has none, and the answer says so).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from ..collect.captures import Replay, Unreadable, load
from ..collect.fans import FanService
from ..collect.registry import registered
from ..collect.serialize import to_json
from ..core.fan import Note
from ..core.model import BackendInfo, CollectorTiming, HostSample, Snapshot
from ..verdict.fanrest import fan_answer
from ..verdict.notes import note_words
from .terminal import clean, fan_table

NO_PROCESSES = "Processes are not read from a capture: what heats the sources is not known here."


def replayed(paths: list[Path]) -> tuple[Snapshot, Replay]:
    """The snapshot a machine's captures make (its fans and temperatures) and what each file was read as."""
    with tempfile.TemporaryDirectory(prefix="fanwhy-explain-") as folder:
        replay = load(paths, Path(folder))
        listing = replay.bmc
        liquid = replay.liquidctl
        service = FanService(sys_root=str(replay.sys_root), etc_root=str(replay.etc_root),
                             bmc_run=(lambda: listing) if listing else "no ipmitool listing in the captures",
                             bmc_every_s=3600.0, every_s=0,
                             extra=registered(replay.proc_root, replay.sys_root,
                                              (lambda: liquid) if liquid else None))
        service.wait_first(10.0)
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


def answer(snap: Snapshot, notes: list[Note]) -> tuple[str, list[str]]:
    """The sentence and the other causes for a replay: what the captures show was done to the control first (a
    refused curve, a failed set, a daemon's log: it answers the question where it is there), then the fans."""
    sentence, also = fan_answer(snap)
    said = note_words(notes, snap)
    if not said:
        return sentence, also
    if not any(f.state != "dead" for f in snap.fans):  # "no fan is read here" would deny the fan the notes name
        return " ".join(said), also
    return " ".join([*said, sentence]), also


def run(paths: list[Path], as_json: bool = False, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Print the fans and the sentence for the captures in ``paths``: 0, or 2 with one line for a file it cannot
    read."""
    try:
        snap, replay = replayed(paths)
    except Unreadable as error:
        err.write(f"fanwhy explain: {error}\n")
        return 2
    sentence, also = answer(snap, replay.notes)
    kinds = replay.kinds
    if as_json:
        out.write(json.dumps({"sentence": sentence, "also": also, "processes": NO_PROCESSES, "read_as": kinds,
                              "fans": to_json(list(snap.fans)), "air": to_json(list(snap.air)),
                              "notes": [{"kind": n.kind, **n.facts} for n in replay.notes],
                              "temperatures": to_json(list(snap.host.temperatures)),
                              "left_out": dict(snap.host.unsupported)}) + "\n")
        return 0
    lines = [clean(sentence).replace("`", ""), *("  · " + clean(a).replace("`", "") for a in also), NO_PROCESSES, ""]
    lines += fan_table(snap.fans) or ["No fan is read in these captures."]
    lines += ["", *(f"Left out: {clean(name)}: {clean(why)}" for name, why in snap.host.unsupported.items())]
    lines += ["Read as: " + "; ".join(kinds)]
    out.write("\n".join(lines) + "\n")
    return 0
