"""The verdict over synthetic snapshots: one scenario per way a fan gets loud (and one where nothing is)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.collect.energy import EnergyMeter
from app.core.model import (
    ContainerRef,
    ContainerSample,
    GpuSample,
    Unattributed,
)
from app.verdict.explain import BusyClock, explain
from app.verdict.words import short_command
from tests.support.builders import GIB, gpu, proc, snap


def test_a_training_job_on_a_hot_gpu() -> None:
    verdict = explain(snap([gpu(util=97, temp=83, power=290, fan=71)],
                           [proc(10, "/usr/bin/python3 /home/alice/train.py --lr 3e-4", sm=97, container="trainer")]))
    assert verdict.headline == ("GPU 0 is at 83 °C and 290 W because `python3 train.py` (alice, container trainer) "
                                "keeps 97 % of its SMs busy; its fan runs at 71 %.")
    assert verdict.busy and verdict.confidence == 0.9
    top = verdict.causes[0]
    assert (top.kind, top.pid, top.numbers["sm_percent"], top.numbers["temperature_c"]) == ("gpu_load", 10, 97, 83)


def test_the_compute_process_is_the_cause_not_the_memory_hog() -> None:
    verdict = explain(snap([gpu(util=60, temp=70, power=200)],
                           [proc(1, "python hog.py", sm=0, memory=20 * GIB),
                            proc(2, "python small_kernel.py", user="bob", sm=58, memory=GIB)]))
    assert verdict.causes[0].pid == 2 and "`python small_kernel.py` (bob)" in verdict.headline
    holder = next(c for c in verdict.causes if c.kind == "memory_holder")
    assert holder.summary == ("`python hog.py` (alice), PID 1, holds 20.0 GiB on GPU 0 but computes nothing: it is "
                              "not what heats the GPU.")
    assert holder.pid == 1 and holder.score < verdict.causes[0].score


def test_a_passively_cooled_card() -> None:
    verdict = explain(snap([gpu(util=98, temp=57, power=650, limit=700, fan=None)],
                           [proc(5, "python3 bench.py", sm=98)]))
    assert verdict.headline == ("GPU 0 is at 57 °C and 650 W because `python3 bench.py` (alice) keeps 98 % of its "
                                "SMs busy; it has no fan of its own (passively cooled): the chassis fans answer its "
                                "heat.")


def test_a_cpu_bound_fan_with_idle_gpus() -> None:
    verdict = explain(snap([gpu(util=0, temp=34)], [proc(7, "/opt/google/chrome/chrome --type=renderer", user="bob",
                                                         gpu_index=None, cpu=100)], cpu=100))
    assert verdict.headline == ("No GPU is busy: the CPU is at 100 % (48 °C) because of `chrome` (bob) at 100 % "
                                "of a core; GPU 0 idles at 34 °C.")
    assert verdict.causes[0].kind == "cpu_load" and verdict.causes[0].pid == 7


def test_a_cpu_load_spread_over_one_program_is_grouped_not_pinned_on_one_process() -> None:
    """Six workers at 29 % of a core each on 2 cores at 88 %: no single one is blamed; the program is."""
    workers = [proc(100 + i, "python -m app.vendors.simulated_worker --job x", user="root", gpu_index=None, cpu=29)
               for i in range(6)]
    verdict = explain(snap([], workers, cpu=88, cores=2))
    assert verdict.headline == ("The CPU is at 88 % (48 °C), spread over 6 processes of "
                                "`python -m app.vendors.simulated_worker`: together 174 % of a core.")
    assert verdict.causes[0].pid is None


def test_a_cpu_load_of_one_users_many_programs_names_the_user() -> None:
    jobs = [proc(200 + i, f"prog{i} --run", user="carol", gpu_index=None, cpu=40) for i in range(4)]
    verdict = explain(snap([], [*jobs, proc(300, "sshd", user="root", gpu_index=None, cpu=5)], cpu=90, cores=2))
    assert "spread over 4 processes of user carol: together 160 % of a core" in verdict.headline


def test_a_process_with_a_small_share_is_never_blamed() -> None:
    """16 cores at 90 %, the busiest process holds one core: the load is spread, and nobody is named."""
    scattered = [proc(400 + i, f"job{i}", user=f"u{i}", gpu_index=None, cpu=100 - i) for i in range(5)]
    verdict = explain(snap([], scattered, cpu=90, cores=16))
    assert verdict.headline == "The CPU is at 90 % (48 °C), spread over many processes, none with a large share."
    assert "job0" not in verdict.headline and verdict.causes[0].pid is None


def test_thermal_throttling_is_called_out() -> None:
    hot = gpu(util=99, temp=88, power=300, throttle_reasons=("sw_thermal_slowdown",))
    verdict = explain(snap([hot], [proc(3, "python3 train.py", sm=99)]))
    kinds = [c.kind for c in verdict.causes]
    assert kinds[0] == "thermal_throttle" and "gpu_load" in kinds
    assert "throttled for heat at 88 °C and 300 W (slowdown at 87 °C)" in verdict.causes[0].summary
    assert verdict.headline.startswith("GPU 0 is at 88 °C")  # the headline stays the load and who causes it


def test_a_power_cap() -> None:
    capped = gpu(util=99, temp=62, power=699, limit=700, fan=None, throttle_reasons=("sw_power_cap",))
    verdict = explain(snap([capped], [proc(3, "python3 train.py", sm=99)]))
    cap = next(c for c in verdict.causes if c.kind == "power_cap")
    assert "held at its power limit (700 W)" in cap.summary


def test_two_containers_sharing_a_gpu() -> None:
    verdict = explain(snap([gpu(util=95, temp=75, power=280)],
                           [proc(1, "vllm serve", sm=30, container="chat"), proc(2, "python3 embed.py", sm=60,
                                                                                   container="embedder")]))
    assert "`python3 embed.py` (alice, container embedder) keeps 60 %" in verdict.headline
    assert "with `vllm serve` (alice, container chat) at 30 %" in verdict.headline  # the program, with its subcommand


def test_a_hidden_workload_is_the_cause() -> None:
    hidden = proc(4242, "x", gpu_index=0, sm=96, memory=None, visibility="host-pid-only",
                  status="outside-namespace")
    hidden = replace(hidden, name=None, command=None, user=None)
    unattributed = Unattributed(gpu_index=0, memory_bytes=7 * GIB, sm_percent=2.0, reason="another PID namespace")
    verdict = explain(snap([gpu(util=98, temp=57, power=690, limit=700, fan=None)], [hidden],
                           unattributed=(unattributed,)))
    assert "PID 4242 (in another PID namespace) keeps 96 %" in verdict.headline
    assert verdict.confidence == 0.6
    verdict = explain(snap([gpu(util=98, temp=57, power=690, limit=700, fan=None)], [],
                           unattributed=(unattributed,)))
    assert "work FanWhy cannot see: processes in another PID namespace hold 7.0 GiB" in verdict.headline
    assert verdict.confidence == 0.5


def test_everything_idle_invents_no_cause() -> None:
    verdict = explain(snap([gpu(util=0, temp=34), gpu(index=1, util=1, temp=31, fan=None)],
                           [proc(9, "python3 idle_notebook.py", sm=None, gpu_index=None, cpu=0.5)]))
    assert verdict.headline.startswith("Nothing is busy (GPU 0 idles at 34 °C, GPU 1 idles at 31 °C). ")
    assert "The fan of GPU 0 is at 30 % duty" in verdict.headline and "floor" not in verdict.headline
    turning = next(f for f in verdict.fan_findings if f.kind == "turning")  # its one reading, no floor claimed
    assert turning.facts["duty"] == 30.0 and "firmware-floor" not in {f.kind for f in verdict.fan_findings}
    assert verdict.causes == () and not verdict.busy


def test_no_gpu_and_nothing_busy() -> None:
    verdict = explain(snap([], []))
    assert verdict.headline == "Nothing is busy. No fan is read here, so what the fans do cannot be seen."


def test_a_lost_gpu() -> None:
    lost = GpuSample(vendor="nvidia", index=1, uuid="GPU-1", name="Test GPU", error="NVMLError_GpuIsLost: GPU is lost")
    verdict = explain(snap([gpu(util=0), lost]))
    assert verdict.busy and verdict.causes[0].kind == "gpu_failed"
    assert verdict.headline.startswith("GPU 1 has failed (NVMLError_GpuIsLost: GPU is lost)")


def test_an_idle_gpu_kept_awake_by_a_context() -> None:
    awake = replace(gpu(util=0, power=60), pstate="P0")
    verdict = explain(snap([awake], [proc(11, "python3 serve.py", sm=0, memory=2 * GIB)]))
    wake = next(c for c in verdict.causes if c.kind == "idle_wake")
    assert wake.summary == ("GPU 0 is idle but stays in P0 at 60 W: `python3 serve.py` (alice) holds a context on "
                            "it at 0 % SM.")
    assert not verdict.busy


@pytest.mark.parametrize(("persistence", "display", "words"), [(False, False, "persistence mode is off"),
                                                               (True, True, "a display is attached")])
def test_idle_wake_reasons(persistence: bool, display: bool, words: str) -> None:
    awake = replace(gpu(util=0), pstate="P0", persistence_mode=persistence, display_active=display)
    (wake,) = explain(snap([awake])).causes
    assert words in wake.summary


def test_a_datacenter_gpu_idling_in_p0_with_no_reason_is_not_a_cause() -> None:
    idle = replace(gpu(util=0, power=78, limit=700, fan=None), pstate="P0", persistence_mode=True,
                   display_active=False)
    assert explain(snap([idle])).causes == ()


def test_busy_for_minutes_counts_the_whole_unbroken_stretch() -> None:
    clock = BusyClock()
    clock.update(snap([gpu(util=90, temp=70, power=250)], timestamp=500.0))
    clock.update(snap([gpu(util=3, temp=50, power=90)], timestamp=600.0))  # a break: the stretch starts again
    for t in range(1000, 4600, 10):  # an hour busy, longer than any window of snapshots kept in memory
        clock.update(snap([gpu(util=90, temp=70, power=250)], timestamp=float(t)))
    now = snap([gpu(util=90, temp=70, power=250)], [proc(1, "python3 train.py", sm=90)], timestamp=4600.0)
    assert "GPU 0 is at 70 °C and 250 W (busy for 60 min) because" in explain(now, clock.update(now)).headline
    fresh = BusyClock()
    assert "busy for" not in explain(now, fresh.update(now)).headline


def test_without_per_process_sm_the_process_on_it_is_named_with_low_confidence() -> None:
    verdict = explain(snap([gpu(util=80, temp=70, power=250)], [proc(1, "ollama runner", sm=None, memory=8 * GIB)]))
    assert "`ollama runner` (alice) is the process on it (per-process SM % is not reported here)" in verdict.headline
    assert verdict.confidence == 0.4


def test_short_command() -> None:
    p = proc(1, "/usr/bin/python3 -u /srv/app/main.py --port 1")
    assert short_command(p) == "python3 main.py"
    assert short_command(replace(p, command="/usr/local/bin/ollama serve")) == "ollama serve"
    assert short_command(replace(p, command=None, name=None)) == "PID 1"
    assert short_command(replace(p, command="python3 -c 'import time; time.sleep(9)'")) == "python3 -c"
    assert short_command(replace(p, command="python -m vllm.entrypoints.api_server --port 8000")) == \
        "python -m vllm.entrypoints.api_server"


def test_power_is_split_by_activity_and_integrated() -> None:
    """No idle measured yet (busy from the first tick): the board is the processes', by normalised SM share."""
    meter = EnergyMeter()
    gpus = [gpu(util=100, power=600, limit=700)]
    procs = [proc(1, "python3 matmul.py", sm=90), proc(2, "python3 hog.py", sm=0, memory=20 * GIB)]
    containers = [ContainerSample(container=ContainerRef(runtime="docker", id="c" * 64, name="job"), gpu_access=True,
                                  pids=(1,), gpu_indices=(0,), gpu_memory_bytes=GIB, memory_method="reported",
                                  sm_percent=90, cpu_percent=1)]
    unattributed = [Unattributed(gpu_index=0, memory_bytes=0, sm_percent=10, reason="")]
    out = meter.apply(0.0, gpus, procs, containers, unattributed)
    assert [p.power_w for p in out[0]] == [600.0, 0.0] and out[0][0].energy_wh == 0.0
    assert out[2][0].power_w == 0.0  # 10 % of utilization over the SM % is the counters disagreeing, not hidden work
    assert out[3][0].idle_from == "unknown" and out[3][0].idle_w == 0.0
    out = meter.apply(3.6, gpus, procs, containers, unattributed)  # 3.6 s at 600 W = 0.6 Wh
    assert out[0][0].energy_wh == pytest.approx(0.6) and out[1][0].energy_wh == pytest.approx(0.6)
    out = meter.apply(100.0, gpus, procs, containers, unattributed)  # a 96 s gap: not integrated
    assert out[0][0].energy_wh == pytest.approx(0.6)


def test_sm_shares_past_100_percent_are_scaled() -> None:
    out = EnergyMeter().apply(0.0, [gpu(util=100, power=300)], [proc(1, "a", sm=80), proc(2, "b", sm=80)], [], [])
    assert [p.power_w for p in out[0]] == [150.0, 150.0]


def test_a_busy_cpu_beside_a_lightly_busy_gpu() -> None:
    light = gpu(util=25, temp=50, power=90)
    chrome = proc(7, "/opt/google/chrome/chrome", user="bob", gpu_index=None, cpu=100)
    verdict = explain(snap([light], [proc(1, "python3 infer.py", sm=25), chrome], cpu=100))
    assert verdict.headline.startswith("The CPU is at 100 % (48 °C) because of `chrome` (bob)")
    assert verdict.headline.endswith("GPU 0 is busy too, at 25 % (see the causes).")  # which GPU, how busy
    two = explain(snap([light, gpu(index=2, util=31, temp=50, power=90)],
                       [proc(1, "python3 infer.py", sm=25), proc(3, "python3 b.py", gpu_index=2, sm=31), chrome],
                       cpu=100))
    assert two.headline.endswith("GPUs 0 and 2 are busy too, at 25 and 31 % (see the causes).")
    assert [c.kind for c in verdict.causes][:2] == ["cpu_load", "gpu_load"]
    busy = explain(snap([gpu(util=90, temp=75, power=280)], [proc(1, "python3 train.py", sm=90), chrome], cpu=100))
    assert busy.headline.startswith("GPU 0 is at 75 °C")
    assert next(c for c in busy.causes if c.kind == "cpu_load").summary.startswith("Also, the CPU is at 100 %")


def test_an_idle_gpu_kept_awake_is_the_headline_through_the_fake_nvml() -> None:
    """The H100 as measured idle in P0 at 126 W; this test's own process holds a context at 0 % SM. Nothing computes,
    so the answer is the holder, not "the fans are on their idle curve" (the idle-holder work)."""
    import os

    from app.collect.assemble import build_collector
    from app.collect.settings import Settings
    from tests.conftest import nvidia_selection
    from tests.fakes.fake_nvml import scenario

    fake = scenario("h100_idle")
    fake.run_on(0, os.getpid(), memory_bytes=512 * 2**20, sm_percent=0)
    collector = build_collector(Settings(db="none"), nvidia_selection(fake))
    try:
        collector.collect()
        frame = collector.collect()
        assert frame is not None
        calm = replace(frame.snapshot, host=replace(frame.snapshot.host, cpu_percent=5.0))  # whatever this VM runs
        verdict = explain(calm)
        assert verdict.busy is False
        assert verdict.headline.startswith("GPU 0 is idle but stays in P0 at 126 W: `")
        assert verdict.headline.endswith("holds a context on it at 0 % SM.")
        # the same GPU without the holder, and a busy CPU: the CPU is named as the only load
        fake.set(0, "compute_processes", [])
        fake.set(0, "process_utilization", [])
        quiet = collector.collect()
        assert quiet is not None
        host = replace(quiet.snapshot.host, cpu_percent=96.0, cpu_count=1)
        burner = proc(77, "python3 burn.py", gpu_index=None, cpu=95)
        cpu_only = explain(replace(quiet.snapshot, host=host, processes=(burner,)))
        assert cpu_only.headline.startswith("No GPU is busy: the CPU is at 96 %") and "`python3 burn.py`" in \
            cpu_only.headline
    finally:
        collector.stop()


def test_a_gpu_whose_backend_gives_one_fan_duty_is_judged_by_the_fan_rules() -> None:
    """A backend that gives a card's fan one duty and no fan record (the basic backend): at 0 % while the card is at
    90 °C the fan wing's no-cooling rule holds for it as for any card's fan, and it stands as a cause beside the
    load (fails when such a card's fan reaches the rules as no fan at all)."""
    verdict = explain(snap([gpu(util=95, temp=90, power=300, fan=0.0)], [proc(3, "python train.py", sm=95.0)]))
    hot = [f for f in verdict.fan_findings if f.kind == "hot-not-cooled"]
    assert hot and hot[0].subjects[0] == "nvidia/gpu0 fan", verdict.fan_findings
    assert any(c.kind == "fan_fault" and c.numbers["finding"] == "hot-not-cooled" for c in verdict.causes)
