"""The demo's GPUs are real worker processes: they live as long as the process that started them, whichever thread
opened the backend, and their load is measured over a whole duty cycle from the first sample on."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from app.vendors.simulated import FIRST_WINDOW_S, SimulatedBackend


@pytest.fixture
def backend() -> Iterator[SimulatedBackend]:
    made = SimulatedBackend(gpus=2, peak=0.3)
    yield made
    made.close()


def test_the_workers_outlive_the_thread_that_opened_them(backend: SimulatedBackend) -> None:
    """A one-shot answer opens the backend on a thread that ends once it has read the GPUs. The workers asked the
    kernel for SIGTERM at their parent's death (PR_SET_PDEATHSIG), which Linux sends when the *thread* that started
    them ends: a one-shot's workers were killed so, and its GPUs read idle (the mutant this fails on: that request
    put back in the worker's start)."""
    def open_then_end() -> None:
        backend.open()
        time.sleep(1.0)  # ends well after the workers run

    opener = threading.Thread(target=open_then_end)
    opener.start()
    opener.join(timeout=60)
    assert not opener.is_alive()
    time.sleep(0.5)  # SIGTERM, had it been sent, has been acted on
    workers = [gpu.worker for gpu in backend._gpus]
    assert all(w is not None and w.poll() is None for w in workers), [w and w.poll() for w in workers]
    samples = backend.sample()
    assert [s.error for s in samples] == [None, None]


def test_the_first_sample_measures_a_whole_window_after_the_workers_run(backend: SimulatedBackend) -> None:
    """/proc counts a worker's CPU in 10 ms ticks over a 0.1 s duty cycle: a first sample taken just after the
    workers start read no tick at all on a busy machine (every GPU idle). The first sample waits until
    ``FIRST_WINDOW_S`` after every worker said it runs (the mutant: no wait), and the wave puts at least one of two
    GPUs at 30 % of its peak or more at any moment, so one reads busy."""
    backend.open()
    opened = time.monotonic()
    samples = backend.sample()
    assert time.monotonic() - opened >= FIRST_WINDOW_S - 0.05
    assert max(s.utilization_percent or 0.0 for s in samples) > 0, samples
    again = time.monotonic()
    backend.sample()
    assert time.monotonic() - again < FIRST_WINDOW_S  # only the first sample waits
