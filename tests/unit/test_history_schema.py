"""The history's schema is versioned (``PRAGMA user_version``) and migrated one step at a time: a history made before
versions were kept opens with nothing lost, a file from a newer FanWhy is refused and left as it is.

``tests/fixtures/history/unversioned.db`` is a history made by FanWhy before versions were kept (the code at the
commit before app/store/schema.py existed, through its own write path): 150 ticks of one GPU, the host and a process,
two minute rollups, verdict events, and one recording with a sample."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from app.cli.preflight import check_history
from app.collect.config import ConfigError
from app.collect.settings import Settings
from app.store import schema
from app.store.history import History
from app.store.schema import SCHEMA_VERSION, NewerSchema
from tests.support.history import T0, Clock, feed

FIXTURE = Path(__file__).parent.parent / "fixtures" / "history" / "unversioned.db"
TABLES = ("gpu_raw", "gpu_minute", "host_raw", "host_minute", "proc_raw", "proc_minute", "events", "recordings",
          "recording_samples")


def counts(path: Path) -> dict[str, int]:
    with sqlite3.connect(path) as db:
        return {t: db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def columns(path: Path) -> dict[str, list[str]]:
    with sqlite3.connect(path) as db:
        names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        return {t: [c[1] for c in db.execute(f"PRAGMA table_info({t})")] for t in names}


@pytest.fixture
def old_history(tmp_path: Path) -> Path:
    path = tmp_path / "history.db"
    shutil.copyfile(FIXTURE, path)
    return path


def test_a_history_made_before_versions_is_migrated_with_nothing_lost(old_history: Path) -> None:
    before = counts(old_history)
    assert schema.file_version(old_history) == 0 and before["gpu_raw"] == 150 and before["recordings"] == 1
    clock = Clock(T0 + 200)
    history = History(old_history, retention_hours=24 * 366, clock=clock).open()
    try:
        assert schema.file_version(old_history) == SCHEMA_VERSION
        assert counts(old_history) == before
        points = history.gpu_series(0, "utilization_percent", history.window(T0, T0 + 149, step=1))
        assert len(points) == 150 and points[0][1] == 40 and points[60][1] == 50
        assert next(h for _, h, _ in history.verdicts(T0, T0 + 200)).startswith("GPU 0")
        feed(history, clock, 5, start=T0 + 200)  # and it goes on being written
        assert counts(old_history)["gpu_raw"] == 155
    finally:
        history.close()


def test_version_one_is_the_schema_of_the_histories_users_have(tmp_path: Path) -> None:
    """Migration 1 creates exactly the tables and columns of a history made before versions: it must never change
    (a new column is a new step)."""
    fresh = tmp_path / "fresh.db"
    with sqlite3.connect(fresh, isolation_level=None) as db:
        schema.MIGRATIONS[0](db)
    assert columns(fresh) == columns(FIXTURE)
    latest = tmp_path / "latest.db"
    History(latest).open().close()
    assert schema.file_version(latest) == SCHEMA_VERSION


def test_version_two_adds_each_fans_series_and_nothing_else(old_history: Path) -> None:
    before = columns(old_history)
    with sqlite3.connect(old_history, isolation_level=None) as db:
        for step in schema.MIGRATIONS[:2]:
            step(db)
    added = {name: cols for name, cols in columns(old_history).items() if name not in before}
    assert added == {"fan_raw": ["ts", "fan", "rpm", "percent", "source_c"],
                     "fan_minute": ["minute", "fan", "n", "rpm_min", "rpm_mean", "rpm_max", "percent_min",
                                    "percent_mean", "percent_max", "source_c_min", "source_c_mean", "source_c_max"]}
    assert {name: cols for name, cols in columns(old_history).items() if name in before} == before


def test_version_three_adds_the_ledgers_idle_and_unattributed_power_to_the_gpu_tables(old_history: Path) -> None:
    with sqlite3.connect(old_history, isolation_level=None) as db:
        for step in schema.MIGRATIONS[:2]:
            step(db)
    before = columns(old_history)
    with sqlite3.connect(old_history, isolation_level=None) as db:
        schema.MIGRATIONS[2](db)
    after = columns(old_history)
    assert after["gpu_raw"] == [*before["gpu_raw"], "power_idle_w", "power_unattributed_w"]
    added = [f"power_{part}_w_{stat}" for part in ("idle", "unattributed") for stat in ("min", "mean", "max")]
    assert after["gpu_minute"] == [*before["gpu_minute"], *added]
    assert {k: v for k, v in after.items() if not k.startswith("gpu_")} == \
        {k: v for k, v in before.items() if not k.startswith("gpu_")}


def test_a_history_from_a_newer_fanwhy_is_refused_and_left_as_it_is(old_history: Path) -> None:
    with sqlite3.connect(old_history) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    digest = hashlib.sha256(old_history.read_bytes()).hexdigest()
    with pytest.raises(NewerSchema, match="newer FanWhy") as refused:
        History(old_history).open()
    assert f"schema version {SCHEMA_VERSION + 1}" in str(refused.value) and "FANWHY_DB" in str(refused.value)
    assert hashlib.sha256(old_history.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in old_history.parent.iterdir()) == ["history.db"]  # nothing moved aside or made
    with pytest.raises(ConfigError, match="newer FanWhy") as at_start:  # and at start, as one line naming FANWHY_DB
        check_history(Settings(db=str(old_history)))
    assert at_start.value.setting == "db"


def test_a_failed_step_leaves_the_file_at_its_version(old_history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each step is one transaction: a step that fails rolls back, and the version stays where it was."""
    def broken(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE half_done (x)")
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(schema, "MIGRATIONS", (*schema.MIGRATIONS, broken))
    monkeypatch.setattr(schema, "SCHEMA_VERSION", len(schema.MIGRATIONS) + 1)
    with sqlite3.connect(old_history, isolation_level=None) as db, pytest.raises(sqlite3.OperationalError):
        schema.migrate(db)
    assert schema.file_version(old_history) == SCHEMA_VERSION  # the real steps held
    assert "half_done" not in columns(old_history)


def test_version_four_adds_the_activity_counters_to_the_gpu_tables(old_history: Path) -> None:
    with sqlite3.connect(old_history, isolation_level=None) as db:
        for step in schema.MIGRATIONS[:3]:
            step(db)
        db.execute("PRAGMA user_version = 3")
    before = columns(old_history)
    History(old_history).open().close()
    after = columns(old_history)
    counters = ["sm_active_percent", "sm_occupancy_percent", "tensor_percent", "fp64_percent", "fp32_percent",
                "fp16_percent", "dram_percent"]
    assert after["gpu_raw"] == [*before["gpu_raw"], *counters]
    parts = ("min", "mean", "max")
    assert after["gpu_minute"] == [*before["gpu_minute"], *(f"{c}_{part}" for c in counters for part in parts)]
    assert {k: v for k, v in after.items() if not k.startswith("gpu_")} == \
        {k: v for k, v in before.items() if not k.startswith("gpu_")}
