"""Scratch folders: a signal that ends the process never leaves one behind, whenever it comes."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.core import scratch as scratch_module
from app.core.scratch import scratch

PREFIX = "fanwhy-test-scratch-"


@pytest.fixture
def terminate_raises(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """SIGTERM handled as explain handles it (SystemExit), scratch folders made under tmp_path."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def ended(signum: int, _frame: object) -> None:
        raise SystemExit(128 + signum)

    before = signal.signal(signal.SIGTERM, ended)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_terminate_right_after_the_folder_is_made_removes_it(
        terminate_raises: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The window a loaded machine hit: the folder exists, the block that removes it not yet entered."""
    create = scratch_module._create

    def create_then_terminated(path: Path) -> None:
        create(path)
        os.kill(os.getpid(), signal.SIGTERM)  # its handler runs before the folder is handed to the block

    monkeypatch.setattr(scratch_module, "_create", create_then_terminated)
    with pytest.raises(SystemExit) as ended, scratch(PREFIX):
        pass
    assert ended.value.code == 128 + signal.SIGTERM
    assert not list(tmp_path.glob(f"{PREFIX}*"))


def test_a_terminate_inside_the_block_removes_the_folder(terminate_raises: None, tmp_path: Path) -> None:
    with pytest.raises(SystemExit), scratch(PREFIX) as folder:
        (folder / "stdin").write_text("fan1: 0 RPM\n")
        os.kill(os.getpid(), signal.SIGTERM)
    assert not list(tmp_path.glob(f"{PREFIX}*"))


def test_the_folder_is_there_inside_the_block_and_gone_after(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with scratch(PREFIX) as folder:
        assert folder.is_dir() and folder.name.startswith(f"{PREFIX}{os.getpid()}-")
    assert not folder.exists()
