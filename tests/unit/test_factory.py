"""Backend choice: NVML -> amdsmi -> basic, each in isolation, with the reasons kept for /api/health."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.vendors.base import BackendUnavailable
from app.vendors.basic import BasicBackend
from app.vendors.factory import default_builders, select_backend, select_in_background
from app.vendors.nvidia import NvidiaBackend
from app.vendors.nvidia_smi import NvidiaSmi
from tests.conftest import nvidia_selection
from tests.fakes.fake_nvml import scenario

EMPTY = Path(__file__).parent.parent / "fixtures" / "empty"


def builders(nvml_scenario: str) -> dict[str, Any]:
    chosen = default_builders()
    chosen["nvidia"] = lambda: NvidiaBackend(nvml=scenario(nvml_scenario))
    chosen["basic"] = lambda: BasicBackend(sys_root=EMPTY, nvidia_smi=NvidiaSmi("/nonexistent/nvidia-smi"))
    return chosen


def test_auto_picks_nvml_when_it_works() -> None:
    selection = select_backend("auto", builders("h100_load"))
    assert selection.backend.name == "nvidia" and dict(selection.skipped) == {}


@pytest.mark.parametrize(("failure", "words"), [("library_not_found", "LibraryNotFound"),
                                                ("driver_mismatch", "version mismatch")])
def test_nvml_failing_falls_back_to_basic_with_the_reason(failure: str, words: str) -> None:
    selection = select_backend("auto", builders(failure))
    assert selection.backend.name == "basic"
    assert words in selection.skipped["nvidia"]
    assert "amdsmi" in selection.skipped["amd"]


@pytest.mark.parametrize(("failure", "kind", "sentence"), [
    ("library_not_found", "no-driver", "No GPU found: no NVIDIA driver, no AMD or Intel card."),
    ("driver_mismatch", "failed", "No GPU found: the NVIDIA driver did not start (driver/library version mismatch"),
])
def test_the_no_gpu_sentence_reads_the_kind_of_each_reason(failure: str, kind: str, sentence: str) -> None:
    """The sentence switches on the reason's kind, never on its words: the words may change, the kind stays."""
    from dataclasses import replace

    from app.vendors.factory import no_gpu_sentence

    selection = select_backend("auto", builders(failure))
    selection.backend.sample()
    assert selection.kinds["nvidia"] == kind and selection.kinds["amd"] == "no-library"
    assert no_gpu_sentence(selection).startswith(sentence)
    reworded = replace(selection, skipped={**selection.skipped, "nvidia": "NVML: reworded by a new driver"})
    assert no_gpu_sentence(reworded).startswith(sentence.split(" (")[0].split(",")[0])


def test_a_selection_in_the_background_returns_raises_or_times_out() -> None:
    """What `fanwhy snapshot` waits on: the same selection as select_backend, its error raised in the caller, and a
    driver call that never returns reported as a timeout instead of a hang."""
    selection = select_in_background("auto", builders("h100_load"))(5.0)
    assert selection.backend.name == "nvidia" and dict(selection.skipped) == {}
    failing = builders("library_not_found")
    with pytest.raises(BackendUnavailable, match="LibraryNotFound"):
        select_in_background("nvidia", failing)(5.0)
    release = threading.Event()
    stuck = scenario("h100_load")
    stuck.set(0, "temperature", lambda *_: (release.wait(30), 57)[1])  # the first sample (with_other_cards) hangs
    hanging = builders("h100_load")
    hanging["nvidia"] = lambda: NvidiaBackend(nvml=stuck)
    started = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match=r"opening the auto backend has not finished in 0\.3 s"):
            select_in_background("auto", hanging)(0.3)
        assert time.monotonic() - started < 2.0
    finally:
        release.set()


def test_a_backend_that_crashes_on_open_does_not_stop_the_others() -> None:
    chosen = builders("h100_load")

    class Broken:
        name = "nvidia"

        def open(self) -> None:
            raise RuntimeError("boom")

    chosen["nvidia"] = Broken
    selection = select_backend("auto", chosen)
    assert selection.backend.name == "basic" and selection.skipped["nvidia"] == "RuntimeError: boom"


def test_an_explicit_backend_that_cannot_open_raises_with_the_reason() -> None:
    with pytest.raises(BackendUnavailable, match="LibraryNotFound"):
        select_backend("nvidia", builders("library_not_found"))


def test_auto_never_picks_simulated_and_unknown_names_are_refused() -> None:
    assert select_backend("auto", builders("library_not_found")).backend.name == "basic"
    with pytest.raises(ValueError, match="unknown backend"):
        select_backend("cuda", builders("h100_load"))


def test_health_says_why_basic_took_over(make_app: Any) -> None:
    app = make_app(select_backend("auto", builders("library_not_found")), start=False)
    app.extensions["fanwhy"].collector.collect()
    body = app.test_client().get("/api/health").get_json()
    assert body["backend"] == "basic"
    assert "LibraryNotFound" in body["skipped_backends"]["nvidia"]
    assert "no DRM card" in body["no_gpu_reason"] and "LibraryNotFound" in body["no_gpu_reason"]
    summary = app.test_client().get("/api/gpu/summary").get_json()
    assert summary["gpu_count"] == 0 and "LibraryNotFound" in summary["no_gpu_reason"]


def test_nvidia_selection_helper_opens_once() -> None:
    fake = scenario("h100_load")
    nvidia_selection(fake)
    assert fake.calls["init"] == 1


def test_every_backend_declares_the_contract_and_nobody_probes_it() -> None:
    """Optional capabilities live in the Backend protocol with defaults (CONTRIBUTING.md): no getattr probes."""
    import re
    from pathlib import Path

    from app.vendors.amd import AmdBackend
    from app.vendors.base import Backend
    from app.vendors.basic import BasicBackend
    from app.vendors.factory import CombinedBackend
    from app.vendors.nvidia import NvidiaBackend
    from app.vendors.simulated import SimulatedBackend

    for cls in (NvidiaBackend, AmdBackend, BasicBackend, SimulatedBackend, CombinedBackend):
        assert Backend in cls.__mro__ and "__getattr__" not in vars(cls), cls
    assert Backend.events(BasicBackend()) == [] and Backend.event_watch(BasicBackend()) == "not an NVML backend"
    probe = re.compile(r"getattr\((self\.)?(collector\.)?(backend|primary)\b")
    root = Path(__file__).resolve().parent.parent.parent / "app"
    for path in root.rglob("*.py"):
        assert not probe.search(path.read_text()), path


def test_the_masters_check_of_a_named_backend_leaves_no_nvml_behind_for_the_fork(monkeypatch: pytest.MonkeyPatch
                                                                                ) -> None:
    """``FANWHY_BACKEND=nvidia`` is checked in gunicorn's master before it forks the worker: NVML is opened without a
    thread waiting for its events and shut down at once. (A thread still waiting when the master forked left the
    worker's NVML hung in nvmlEventSetCreate on an H100 host.)"""
    from app.cli.preflight import check_backend
    from app.collect.settings import Settings
    from app.vendors import factory

    fake = scenario("h100_load")
    real = NvidiaBackend
    monkeypatch.setattr(factory, "NvidiaBackend", lambda **kwargs: real(nvml=fake, **kwargs))
    check_backend(Settings(backend="nvidia", db="none"))
    assert fake.calls["init"] == 1 and fake.initialised == 0  # opened, then shut down before returning
    assert fake.calls["event_set_create"] == 0  # no event thread was started


def test_the_backends_are_built_with_typed_vendor_options_from_the_settings() -> None:
    """The factory reads no setting by name: it is handed the vendors' own options (Settings.vendor_options)."""
    from pathlib import Path

    from app.collect.config import load_settings
    from app.vendors.basic import BasicBackend

    options = load_settings({"FANWHY_SYS_ROOT": "/host/sys", "FANWHY_NVIDIA_SMI": "/opt/bin/nvidia-smi",
                             "FANWHY_SIM_GPUS": "3"}).vendor_options
    assert (options.sys_root, options.nvidia_smi, options.sim_gpus) == ("/host/sys", "/opt/bin/nvidia-smi", 3)
    basic = default_builders(options)["basic"]()
    assert isinstance(basic, BasicBackend) and basic.sys_root == Path("/host/sys")
    assert basic.smi.binary == "/opt/bin/nvidia-smi"
