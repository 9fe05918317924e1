"""What the history keeps: minute rollups of complete minutes, raw rows for the raw horizon, minutes and events for
the retention, and the whole file under its size cap (FANWHY_DB_MAX_MB). The writer calls these in its own
transaction-less maintenance step after a tick's commit."""

from __future__ import annotations

import sqlite3
import time

from .schema import SERIES, TIMED

_PROCESS_COLUMNS = ("mem", "sm", "power", "energy_wh", "cpu")


def roll_up(db: sqlite3.Connection, start: float, end: float) -> None:
    """min/mean/max per minute of every raw row in [start, end)."""
    for kind, metrics in SERIES.items():
        stats = ", ".join(f"min({m}), avg({m}), max({m})" for m in metrics)
        db.execute(f"INSERT OR REPLACE INTO {kind}_minute SELECT CAST(ts / 60 AS INTEGER) * 60, {kind}, count(*), "
                   f"{stats} FROM {kind}_raw WHERE ts >= ? AND ts < ? GROUP BY 1, 2", (start, end))
    proc_stats = ", ".join(f"min({c}), avg({c}), max({c})" for c in _PROCESS_COLUMNS)
    db.execute("INSERT OR REPLACE INTO proc_minute SELECT CAST(ts / 60 AS INTEGER) * 60, pid, start, "
               f"max(name), max(user), container, max(container_name), count(*), {proc_stats} "
               "FROM proc_raw WHERE ts >= ? AND ts < ? GROUP BY 1, pid, start, container", (start, end))


def trim(db: sqlite3.Connection, now: float, raw_s: float, retention_s: float) -> None:
    """Raw rows older than the raw horizon; minutes, events and recording samples older than the retention."""
    for table, column in TIMED:
        horizon = now - (raw_s if table.endswith("_raw") else retention_s)
        db.execute(f"DELETE FROM {table} WHERE {column} < ?", (horizon,))


def used_bytes(db: sqlite3.Connection) -> int:
    pages, size, free = (db.execute(f"PRAGMA {p}").fetchone()[0] for p in ("page_count", "page_size", "freelist_count"))
    return int((pages - free) * size)


def enforce_size(db: sqlite3.Connection, max_bytes: int) -> list[str]:
    """Over the cap: drop the oldest tenth of the time covered, from every table, until under it. What was dropped,
    one sentence per cut (for /api/health)."""
    cuts = []
    for _ in range(10):
        if used_bytes(db) <= max_bytes:
            break
        spans = [db.execute(f"SELECT min({c}), max({c}) FROM {t}").fetchone() for t, c in TIMED]
        oldest = min((lo for lo, _ in spans if lo is not None), default=None)
        newest = max((hi for _, hi in spans if hi is not None), default=None)
        if oldest is None or newest is None:
            break
        cut = oldest + max(1.0, (newest - oldest) / 10)
        for table, column in TIMED:
            db.execute(f"DELETE FROM {table} WHERE {column} < ?", (cut,))
        cuts.append(f"history reached its {max_bytes / 2**20:g} MB cap (FANWHY_DB_MAX_MB): data before "
                    f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(cut))} was dropped")
    return cuts
