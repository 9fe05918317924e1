"""The history file: whose it is, and its schema, versioned with ``PRAGMA user_version`` and migrated one step at a
time.

**Versions.** 0 is a file with no version: a new, empty database, or a history made before versions were kept (its
tables are version 1's, exactly). Each step of ``MIGRATIONS`` takes a file from version *n* to *n + 1* in one
transaction and is never edited once released (its DDL is literal text, not built from today's metric lists): a
new column or table is a new step. A file whose version is higher than ``SCHEMA_VERSION`` was written by a newer
FanWhy: it is refused with a clear message (``NewerSchema``) and never rewritten.

**Whose file.** A history carries FanWhy's SQLite ``application_id``; a file whose header is gone too (overwritten
with garbage) is still known as FanWhy's by the marker beside it (``.history.db.fanwhy``: the device and inode of
the file FanWhy made). Anything else is another program's file and is never moved or written.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

APPLICATION_ID = 0x46576879  # "FWhy": PRAGMA application_id of every history FanWhy creates
SQLITE_MAGIC = b"SQLite format 3\x00"

# What the writer stores and the readers may ask for (today's columns; a migration adds a new one).
GPU_METRICS = ("utilization_percent", "memory_used_bytes", "memory_percent", "temperature_c", "power_w",
               "fan_speed_percent", "clock_sm_mhz", "power_idle_w", "power_unattributed_w", "sm_active_percent",
               "sm_occupancy_percent", "tensor_percent", "fp64_percent", "fp32_percent", "fp16_percent", "dram_percent")
# The GPU's activity counters (schema version 4), read from its whole-GPU window (app.core.activity).
ACTIVITY_METRICS = frozenset({"sm_active_percent", "sm_occupancy_percent", "tensor_percent", "fp64_percent",
                              "fp32_percent", "fp16_percent", "dram_percent"})
# The ledger's parts of a GPU's power (schema version 3), read from the snapshot's ledger, not from the GPU sample.
LEDGER_METRICS = {"power_idle_w": "idle_w", "power_unattributed_w": "unattributed_w"}
# The host side, so a machine without a GPU (or whose fan is the CPU's) has charts too; kept like a GPU's series
# (raw for an hour, then per minute) in tables of the same shape, with one row key (host = 0).
HOST_METRICS = ("cpu_percent", "load1", "memory_percent", "memory_used_bytes", "cpu_temperature_c", "fan_rpm")
# Each fan (keyed by its id, "hwmon:nct6798/fan2"): its speed both ways and the temperature it follows, so a chart
# can draw speed against source (schema version 2).
FAN_METRICS = ("rpm", "percent", "source_c")
SERIES = {"gpu": GPU_METRICS, "host": HOST_METRICS, "fan": FAN_METRICS}  # table prefix (and key column) -> metrics
PROCESS_METRICS = ("gpu_memory_bytes", "sm_percent", "power_w", "energy_wh", "cpu_percent")
# Every table with a time column, and that column: what retention and the size cap trim.
TIMED = (("gpu_raw", "ts"), ("host_raw", "ts"), ("proc_raw", "ts"), ("fan_raw", "ts"), ("gpu_minute", "minute"),
         ("host_minute", "minute"), ("proc_minute", "minute"), ("fan_minute", "minute"), ("events", "ts"),
         ("recording_samples", "ts"))

_V1 = """
CREATE TABLE IF NOT EXISTS gpu_raw (ts REAL NOT NULL, gpu INTEGER NOT NULL, utilization_percent REAL,
  memory_used_bytes REAL, memory_percent REAL, temperature_c REAL, power_w REAL, fan_speed_percent REAL,
  clock_sm_mhz REAL);
CREATE INDEX IF NOT EXISTS gpu_raw_gpu_ts ON gpu_raw (gpu, ts);
CREATE TABLE IF NOT EXISTS gpu_minute (minute INTEGER NOT NULL, gpu INTEGER NOT NULL, n INTEGER NOT NULL,
  utilization_percent_min REAL, utilization_percent_mean REAL, utilization_percent_max REAL,
  memory_used_bytes_min REAL, memory_used_bytes_mean REAL, memory_used_bytes_max REAL, memory_percent_min REAL,
  memory_percent_mean REAL, memory_percent_max REAL, temperature_c_min REAL, temperature_c_mean REAL,
  temperature_c_max REAL, power_w_min REAL, power_w_mean REAL, power_w_max REAL, fan_speed_percent_min REAL,
  fan_speed_percent_mean REAL, fan_speed_percent_max REAL, clock_sm_mhz_min REAL, clock_sm_mhz_mean REAL,
  clock_sm_mhz_max REAL, PRIMARY KEY (gpu, minute));
CREATE TABLE IF NOT EXISTS host_raw (ts REAL NOT NULL, host INTEGER NOT NULL, cpu_percent REAL, load1 REAL,
  memory_percent REAL, memory_used_bytes REAL, cpu_temperature_c REAL, fan_rpm REAL);
CREATE INDEX IF NOT EXISTS host_raw_host_ts ON host_raw (host, ts);
CREATE TABLE IF NOT EXISTS host_minute (minute INTEGER NOT NULL, host INTEGER NOT NULL, n INTEGER NOT NULL,
  cpu_percent_min REAL, cpu_percent_mean REAL, cpu_percent_max REAL, load1_min REAL, load1_mean REAL, load1_max
  REAL, memory_percent_min REAL, memory_percent_mean REAL, memory_percent_max REAL, memory_used_bytes_min REAL,
  memory_used_bytes_mean REAL, memory_used_bytes_max REAL, cpu_temperature_c_min REAL, cpu_temperature_c_mean
  REAL, cpu_temperature_c_max REAL, fan_rpm_min REAL, fan_rpm_mean REAL, fan_rpm_max REAL, PRIMARY KEY (host,
  minute));
CREATE TABLE IF NOT EXISTS proc_raw (ts REAL NOT NULL, pid INTEGER NOT NULL, start REAL, name TEXT, user TEXT,
  container TEXT, container_name TEXT, mem REAL, sm REAL, power REAL, energy_wh REAL, cpu REAL);
CREATE INDEX IF NOT EXISTS proc_raw_pid_ts ON proc_raw (pid, ts);
CREATE INDEX IF NOT EXISTS proc_raw_container_ts ON proc_raw (container, ts);
CREATE TABLE IF NOT EXISTS proc_minute (minute INTEGER NOT NULL, pid INTEGER NOT NULL, start REAL, name TEXT,
  user TEXT, container TEXT, container_name TEXT, n INTEGER, mem_min REAL, mem_mean REAL, mem_max REAL, sm_min
  REAL, sm_mean REAL, sm_max REAL, power_min REAL, power_mean REAL, power_max REAL, energy_wh_min REAL,
  energy_wh_mean REAL, energy_wh_max REAL, cpu_min REAL, cpu_mean REAL, cpu_max REAL, PRIMARY KEY (pid, start,
  minute));
CREATE INDEX IF NOT EXISTS proc_minute_container ON proc_minute (container, minute);
CREATE TABLE IF NOT EXISTS events (ts REAL NOT NULL, kind TEXT NOT NULL, gpu INTEGER, rule TEXT, state TEXT,
  severity TEXT, message TEXT, data TEXT);
CREATE INDEX IF NOT EXISTS events_ts ON events (ts);
CREATE TABLE IF NOT EXISTS recordings (id TEXT PRIMARY KEY, label TEXT, gpus TEXT, interval_s REAL, started
  REAL, stopped REAL, stats TEXT);
CREATE TABLE IF NOT EXISTS recording_samples (rec TEXT NOT NULL, ts REAL NOT NULL, gpu INTEGER NOT NULL,
  utilization_percent REAL, memory_used_bytes REAL, memory_percent REAL, temperature_c REAL, power_w REAL);
CREATE INDEX IF NOT EXISTS recording_samples_rec ON recording_samples (rec, gpu);
"""


def _v1_tables(db: sqlite3.Connection) -> None:
    """0 -> 1: the tables and indexes of the first versioned schema. A history made before versions has them all
    already (IF NOT EXISTS leaves it as it is); a new file gets them."""
    for statement in filter(str.strip, _V1.split(";")):
        db.execute(statement)


_V2 = """
CREATE TABLE IF NOT EXISTS fan_raw (ts REAL NOT NULL, fan TEXT NOT NULL, rpm REAL, percent REAL, source_c REAL);
CREATE INDEX IF NOT EXISTS fan_raw_fan_ts ON fan_raw (fan, ts);
CREATE TABLE IF NOT EXISTS fan_minute (minute INTEGER NOT NULL, fan TEXT NOT NULL, n INTEGER NOT NULL, rpm_min REAL,
  rpm_mean REAL, rpm_max REAL, percent_min REAL, percent_mean REAL, percent_max REAL, source_c_min REAL,
  source_c_mean REAL, source_c_max REAL, PRIMARY KEY (fan, minute));
"""


def _v2_fans(db: sqlite3.Connection) -> None:
    """1 -> 2: each fan's speed and source temperature, raw and per minute."""
    for statement in filter(str.strip, _V2.split(";")):
        db.execute(statement)


_V3 = """
ALTER TABLE gpu_raw ADD COLUMN power_idle_w REAL;
ALTER TABLE gpu_raw ADD COLUMN power_unattributed_w REAL;
ALTER TABLE gpu_minute ADD COLUMN power_idle_w_min REAL;
ALTER TABLE gpu_minute ADD COLUMN power_idle_w_mean REAL;
ALTER TABLE gpu_minute ADD COLUMN power_idle_w_max REAL;
ALTER TABLE gpu_minute ADD COLUMN power_unattributed_w_min REAL;
ALTER TABLE gpu_minute ADD COLUMN power_unattributed_w_mean REAL;
ALTER TABLE gpu_minute ADD COLUMN power_unattributed_w_max REAL;
"""


def _v3_ledger(db: sqlite3.Connection) -> None:
    """2 -> 3: each GPU's idle and unattributed power beside its board power (the processes' part is the rest)."""
    for statement in filter(str.strip, _V3.split(";")):
        db.execute(statement)


_V4_COLUMNS = ("sm_active_percent", "sm_occupancy_percent", "tensor_percent", "fp64_percent", "fp32_percent",
               "fp16_percent", "dram_percent")  # literal: this step's columns, never today's list


def _v4_activity(db: sqlite3.Connection) -> None:
    """3 -> 4: each GPU's activity counters (SM activity and occupancy, tensor, FP64/FP32/FP16 pipes, DRAM)."""
    for column in _V4_COLUMNS:
        db.execute(f"ALTER TABLE gpu_raw ADD COLUMN {column} REAL")
        for part in ("min", "mean", "max"):
            db.execute(f"ALTER TABLE gpu_minute ADD COLUMN {column}_{part} REAL")


# MIGRATIONS[n] takes a file from version n to n + 1.
MIGRATIONS: tuple[Callable[[sqlite3.Connection], None], ...] = (_v1_tables, _v2_fans, _v3_ledger, _v4_activity)
SCHEMA_VERSION = len(MIGRATIONS)


class ForeignFile(sqlite3.OperationalError):
    """The file at the history's path is not a FanWhy history: it is never moved aside or written."""


class NewerSchema(sqlite3.OperationalError):
    """The history was written by a newer FanWhy (a higher schema version): it is refused, never rewritten."""


def version(db: sqlite3.Connection) -> int:
    return int(db.execute("PRAGMA user_version").fetchone()[0])


def _header(path: Path) -> bytes | None:
    """The first 100 bytes of a file (SQLite's header), None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return handle.read(100)
    except OSError:
        return None


def file_version(path: Path) -> int | None:
    """The schema version written in a history's header (bytes 60-63: SQLite's user_version), without opening it
    as a database; None when the file has no SQLite header."""
    header = _header(path)
    if header is None or len(header) < 64 or not header.startswith(SQLITE_MAGIC):
        return None
    return int.from_bytes(header[60:64], "big")


def migrate(db: sqlite3.Connection, path: Path | str = "the history") -> list[int]:
    """Bring ``db`` to SCHEMA_VERSION, one step per transaction; the versions reached. NewerSchema for a file a newer
    FanWhy wrote. The connection must be in autocommit mode (``isolation_level=None``)."""
    current = version(db)
    if current > SCHEMA_VERSION:
        raise NewerSchema(newer_message(path, current))
    reached = []
    for step in range(current, SCHEMA_VERSION):
        db.execute("BEGIN IMMEDIATE")
        try:
            MIGRATIONS[step](db)
            db.execute(f"PRAGMA user_version = {step + 1}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        reached.append(step + 1)
    return reached


def newer_message(path: Path | str, found: int) -> str:
    return (f"{path} was written by a newer FanWhy (history schema version {found}; this one knows up to "
            f"{SCHEMA_VERSION}): it is left as it is; run the newer FanWhy, or name another file with FANWHY_DB")


def marker_path(path: Path) -> Path:
    """The small file beside a history that names the file (device and inode) FanWhy made there."""
    return path.with_name(f".{path.name}.fanwhy")


def identity_of(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def marked(path: Path) -> tuple[int, int] | None:
    """The identity the marker beside ``path`` names, if any."""
    try:
        device, _, inode = marker_path(path).read_text(encoding="ascii").strip().partition(":")
        return int(device), int(inode)
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def mark(path: Path, identity: tuple[int, int]) -> None:
    """Write the marker for the file FanWhy opened or made at ``path`` (a failure only loses the marker)."""
    if marked(path) != identity:
        with contextlib.suppress(OSError):
            marker_path(path).write_text(f"{identity[0]}:{identity[1]}\n", encoding="ascii")


def ownership(path: Path) -> str:
    """``ours`` for a file FanWhy made (SQLite with its application id), ``legacy`` for a SQLite file with no
    application id (a history made before ids were set, or an empty new database), ``other`` for anything else.
    Read from the file's 100-byte header, so a broken history is still recognised; a file whose header is gone
    too (overwritten with garbage) is ``ours`` when the marker beside it names it."""
    identity = identity_of(path)
    if identity is not None and identity == marked(path):
        return "ours"
    header = _header(path)
    if header is None:
        return "other"
    if not header:
        return "legacy"  # an empty file: SQLite makes a database of it
    if len(header) < 72 or not header.startswith(SQLITE_MAGIC):
        return "other"
    app_id = int.from_bytes(header[68:72], "big")
    return "ours" if app_id == APPLICATION_ID else "legacy" if app_id == 0 else "other"


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "fanwhy" / "history.db"
