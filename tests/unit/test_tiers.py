"""A unit test starts no process and opens no socket: tests/conftest.py refuses both in tests/unit (such a test
belongs in tests/integration), so the unit tier stays fast and steady on a busy machine."""

from __future__ import annotations

import socket
import subprocess

import pytest

from tests.conftest import NotInAUnitTest


def test_a_unit_test_may_not_start_a_process() -> None:
    with pytest.raises(NotInAUnitTest, match="tests/integration"):
        subprocess.run(["true"], check=False)


def test_a_unit_test_may_not_open_a_socket() -> None:
    with socket.socket() as client, pytest.raises(NotInAUnitTest):
        client.connect(("127.0.0.1", 9))
    with socket.socket() as listener, pytest.raises(NotInAUnitTest):
        listener.bind(("127.0.0.1", 0))
