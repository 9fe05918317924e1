"""Reading the history: which table answers a window, and the series, rankings and events the API and "while you
were away" ask for. Every function takes a connection (``History.reader()`` gives one) and only reads."""

from __future__ import annotations

import itertools
import json
import math
import sqlite3

from ..core.jsonvalue import Json, SqlValue
from ..core.record import record
from .schema import PROCESS_METRICS, SERIES

MAX_POINTS = 20_000
_COLUMN = {"gpu_memory_bytes": "mem", "sm_percent": "sm", "power_w": "power", "energy_wh": "energy_wh",
           "cpu_percent": "cpu"}


class HistoryError(ValueError):
    """A history query that cannot be answered as asked (400 with this message)."""


GAP_FACTOR = 3  # no sample over this many steps (or collector intervals, the longer) is a gap, not a slope


@record
class Window:
    since: float
    until: float
    step: float
    source: str
    gap_s: float = 0.0  # a stretch between two points longer than this had no sample: a gap (0: none marked)


def plan(since: float, until: float, step: float | None, *, now: float, raw_s: float, retention_s: float,
         interval_s: float = 1.0) -> Window:
    """Which table answers [since, until] at ``step`` seconds, or HistoryError for a bad range: full rate below a
    60 s step within the raw horizon, else the minute rollup."""
    if not (math.isfinite(since) and math.isfinite(until)) or until <= since:
        raise HistoryError("'since' must be before 'until'")
    if until - since > retention_s + raw_s:
        raise HistoryError(f"the range is longer than the retention ({retention_s / 3600:g} h)")
    if step is None:
        step = max(interval_s, (until - since) / 2000.0)
    if step <= 0 or not math.isfinite(step):
        raise HistoryError("'step' must be a positive number of seconds")
    if (until - since) / step > MAX_POINTS:
        raise HistoryError(f"that asks for more than {MAX_POINTS} points; use step >= "
                           f"{math.ceil((until - since) / MAX_POINTS)}")
    raw_ok = since >= now - raw_s - 1
    if step < 60 and raw_ok:
        return Window(since, until, step, "raw", GAP_FACTOR * max(step, interval_s))
    minute = max(60.0, math.ceil(step / 60.0) * 60.0)
    return Window(since, until, minute, "minute", GAP_FACTOR * minute)


def gapped(points: list[list[float | None]], win: Window) -> list[list[float | None]]:
    """``points`` with a point of no value ([t, None, None, None]) one step after the last point before each stretch
    with no sample longer than the window's ``gap_s``: a chart breaks its line there instead of drawing a slope
    across a time nothing was measured (FanWhy stopped, the machine asleep)."""
    out: list[list[float | None]] = []
    for point in points:
        if out and win.gap_s > 0:
            before, now = out[-1][0], point[0]
            if before is not None and now is not None and now - before > win.gap_s:
                out.append([before + win.step, None, None, None])
        out.append(point)
    return out


def gaps(points: list[list[float | None]], win: Window) -> list[list[float]]:
    """The stretches with no sample inside ``points`` (as ``gapped`` marks them): [from, to] in unix seconds."""
    found = []
    for before, point in itertools.pairwise(points):
        if before[0] is not None and point[0] is not None and win.gap_s > 0 and point[0] - before[0] > win.gap_s:
            found.append([before[0] + win.step, point[0]])
    return found


def series(db: sqlite3.Connection, kind: str, key: int | str, metric: str, win: Window) -> list[list[float | None]]:
    """A GPU's (``kind`` gpu, ``key`` its index), the host's (host, 0) or a fan's (fan, its id) series as
    [t, mean, min, max] points."""
    if metric not in SERIES[kind]:
        raise HistoryError(f"unknown metric {metric!r}; one of {', '.join(SERIES[kind])}")
    if win.source == "raw":
        sql = (f"SELECT CAST(ts / ? AS INTEGER) * ? AS t, avg({metric}), min({metric}), max({metric}) "
               f"FROM {kind}_raw WHERE {kind} = ? AND ts >= ? AND ts <= ? GROUP BY t ORDER BY t")
    else:
        sql = (f"SELECT CAST(minute / ? AS INTEGER) * ? AS t, sum({metric}_mean * n) / sum(n), "
               f"min({metric}_min), max({metric}_max) FROM {kind}_minute WHERE {kind} = ? AND minute >= ? "
               "AND minute <= ? GROUP BY t ORDER BY t")
    return [list(r) for r in db.execute(sql, (win.step, win.step, key, win.since, win.until))]


def process_series(db: sqlite3.Connection, metric: str, win: Window, pid: int | None = None,
                   container: str | None = None) -> list[list[float | None]]:
    """A process's series, or a container's (its processes added up at each instant first)."""
    if metric not in PROCESS_METRICS:
        raise HistoryError(f"unknown metric {metric!r}; one of {', '.join(PROCESS_METRICS)}")
    column = _COLUMN[metric]
    key, value = ("pid", pid) if pid is not None else ("container", container)
    if container is not None:
        inner = (f"SELECT ts AS t0, sum({column}) AS v FROM proc_raw WHERE (container = ? OR "
                 "container_name = ?) AND ts >= ? AND ts <= ? GROUP BY ts") if win.source == "raw" else (
                 f"SELECT minute AS t0, sum({column}_mean) AS v FROM proc_minute WHERE (container = ? OR "
                 "container_name = ?) AND minute >= ? AND minute <= ? GROUP BY minute")
        sql = f"SELECT CAST(t0 / ? AS INTEGER) * ? AS t, avg(v), min(v), max(v) FROM ({inner}) GROUP BY t ORDER BY t"
        args: tuple[SqlValue, ...] = (win.step, win.step, value, value, win.since, win.until)
    elif win.source == "raw":
        sql = (f"SELECT CAST(ts / ? AS INTEGER) * ? AS t, avg({column}), min({column}), max({column}) "
               f"FROM proc_raw WHERE {key} = ? AND ts >= ? AND ts <= ? GROUP BY t ORDER BY t")
        args = (win.step, win.step, value, win.since, win.until)
    else:
        sql = (f"SELECT CAST(minute / ? AS INTEGER) * ? AS t, sum({column}_mean * n) / sum(n), "
               f"min({column}_min), max({column}_max) FROM proc_minute WHERE {key} = ? AND minute >= ? "
               "AND minute <= ? GROUP BY t ORDER BY t")
        args = (win.step, win.step, value, win.since, win.until)
    return [list(r) for r in db.execute(sql, args)]


def top_processes(db: sqlite3.Connection, since: float, until: float, raw_since: float,
                  limit: int = 5) -> list[dict[str, object]]:
    """The programs with the most GPU energy (then SM) in a window, from the raw rows (from ``raw_since``) and the
    minute rollups: each process's energy over the window, summed by program (its name, user and container), so a
    job restarted under a new PID is one line; ``pid`` is its latest process, ``pids`` how many it ran as."""
    rows = db.execute(
        "SELECT max(pid), name, max(user), max(container_name), container, sum(e), avg(sm), max(mem), count(*) FROM "
        "(SELECT pid, max(name) AS name, max(user) AS user, max(container_name) AS container_name, container, "
        "max(energy_wh) - min(energy_wh) AS e, avg(sm) AS sm, max(mem) AS mem FROM "
        "(SELECT pid, name, user, container_name, container, energy_wh, sm, mem "
        "FROM proc_raw WHERE ts >= ? AND ts <= ? UNION ALL SELECT pid, name, user, container_name, container,"
        " energy_wh_max, sm_mean, mem_max FROM proc_minute WHERE minute >= ? AND minute <= ?) WHERE pid > 0 "
        "GROUP BY pid, container) GROUP BY name, user, container ORDER BY 6 DESC, 7 DESC LIMIT ?",
        (max(since, raw_since), until, since, until, limit)).fetchall()
    return [{"pid": r[0], "name": r[1], "user": r[2], "container_name": r[3], "container": r[4],
             "energy_wh": round(r[5] or 0.0, 4), "sm_percent_mean": round(r[6], 1) if r[6] is not None else None,
             "gpu_memory_bytes_max": r[7], "pids": r[8]} for r in rows]


def verdicts(db: sqlite3.Connection, since: float, until: float) -> list[tuple[float, str, dict[str, Json]]]:
    rows = db.execute("SELECT ts, message, data FROM events WHERE kind = 'verdict' AND ts >= ? AND ts <= ? "
                      "ORDER BY ts", (since, until)).fetchall()
    return [(ts, message, json.loads(data or "{}")) for ts, message, data in rows]


def alerts(db: sqlite3.Connection, since: float, until: float, limit: int = 200) -> list[dict[str, object]]:
    rows = db.execute("SELECT ts, gpu, rule, state, severity, message FROM events WHERE kind = 'alert' "
                      "AND ts >= ? AND ts <= ? ORDER BY ts DESC LIMIT ?", (since, until, limit)).fetchall()
    return [dict(zip(("ts", "gpu_index", "rule", "state", "severity", "message"), r, strict=True)) for r in rows]
