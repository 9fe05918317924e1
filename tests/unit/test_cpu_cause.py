"""The CPU side judged as heat is made: a package heats with its busiest core (its boost clock and temperature follow
the busiest core, not the average of all), so one process at a core's worth, or a hot package, is a cause whatever
the machine's average; "Nothing is busy" is never said beside such a process; and whom the cause names holds while
its share holds (the headline keeps its form at a threshold)."""

from __future__ import annotations

from dataclasses import replace

from app.core.snapshot import Snapshot
from app.verdict.cpu import CORE_BUSY_PERCENT, CPU_BUSY_PERCENT, CPU_HOT_C, OWNER_KEEP, OWNER_SHARE
from app.verdict.explain import Remembered, explain
from tests.support.builders import proc, snap


def desktop(busy: int, cores: int = 16, each: float = 97.0, temperature: float = 71.0) -> Snapshot:
    """A desktop with ``busy`` processes each pegging a core (``each`` % of one) and the rest idle; the machine's
    average is what those cores make of all of them."""
    burners = [proc(100 + i, f"python3 burn{i}.py", user="alice", gpu_index=None, cpu=each) for i in range(busy)]
    idle = [proc(900, "sshd", user="root", gpu_index=None, cpu=0.5)]
    state = snap([], [*burners, *idle], cpu=busy * each / cores, cores=cores)
    return replace(state, host=replace(state.host, cpu_temperature_c=temperature))


def test_seven_pegged_cores_of_sixteen_are_a_cause_though_the_average_reads_44_percent() -> None:
    verdict = explain(desktop(7))
    cause = next(c for c in verdict.causes if c.kind == "cpu_load")
    assert verdict.headline.startswith("7 processes keep 7 of the CPU's 16 cores busy (the CPU at 42 %, 71 °C)")
    assert "Nothing is busy" not in verdict.headline and cause.numbers["busy_cores"] == 6.8
    assert "spread over 7 processes of user alice: together 679 % of a core" in verdict.headline


def test_one_pegged_core_of_sixteen_names_its_process() -> None:
    verdict = explain(desktop(1))
    assert verdict.headline.startswith("`python3 burn0.py` (alice) at 97 % of a core keeps one of the CPU's 16 cores "
                                       "busy (the CPU at 6 %, 71 °C)"), verdict.headline
    assert verdict.causes[0].pid == 100
    half = explain(snap([], cpu=CPU_BUSY_PERCENT, cores=16)).causes[0]  # a machine half busy, nobody pegging
    assert verdict.causes[0].score == half.score  # one pegged core heats the package as half the machine's load


def test_a_core_s_worth_is_the_edge() -> None:
    assert [c for c in explain(desktop(1, each=CORE_BUSY_PERCENT)).causes if c.kind == "cpu_load"]
    below = explain(desktop(1, each=CORE_BUSY_PERCENT - 0.1))
    assert not [c for c in below.causes if c.kind == "cpu_load"]
    assert below.headline.startswith("Nothing is busy")


def test_a_hot_package_is_a_cause_at_a_low_load() -> None:
    hot = explain(desktop(0, temperature=CPU_HOT_C + 4))
    assert hot.headline.startswith("The CPU is at 84 °C at 0 % load, spread over many"), hot.headline
    assert "sshd" not in hot.headline  # half a percent of a core heats nothing: nobody is named
    cool = explain(desktop(0, temperature=CPU_HOT_C - 0.1))
    assert cool.headline.startswith("Nothing is busy")


def test_a_process_that_reads_more_than_the_whole_machine_is_another_window() -> None:
    """A process at 90 % of the one core while the machine reads 5 %: the two were sampled over different windows;
    the machine's latest reading is believed."""
    state = snap([], [proc(7, "python3 burn.py", gpu_index=None, cpu=90.0)], cpu=5.0, cores=1)
    assert not [c for c in explain(state).causes if c.kind == "cpu_load"]


def _shares(top: float, cores: int = 2) -> Snapshot:
    """Two cores at 60 %: one process with ``top`` of the load (in cores), three small ones with the rest."""
    busy = 1.2
    rest = (busy - top) / 3
    procs = [proc(7, "python3 duty.py", user="root", gpu_index=None, cpu=100 * top),
             *(proc(20 + i, f"worker{i}", user=f"u{i}", gpu_index=None, cpu=100 * rest) for i in range(3))]
    return snap([], procs, cpu=60.0, cores=cores)


def test_the_named_process_stays_named_while_its_share_holds() -> None:
    """At 45 % of the load a process is not named afresh (OWNER_SHARE 50 %) but stays named once it was (OWNER_KEEP
    35 %): a share that hovers at the threshold gives one headline form."""
    assert OWNER_KEEP < 0.45 * 1.0 < OWNER_SHARE
    fresh = explain(_shares(0.45 * 1.2))
    assert "because of" not in fresh.headline
    remembered = Remembered()
    forms = []
    for share in (0.55, 0.45, 0.52, 0.40, 0.49, 0.38, 0.55):  # the load hovering around half
        headline = remembered.explain(_shares(share * 1.2)).headline
        forms.append("because of `python3 duty.py`" in headline)
    assert all(forms), forms
    gone = remembered.explain(_shares(0.2 * 1.2)).headline  # under OWNER_KEEP: no longer its cause
    assert "because of `python3 duty.py`" not in gone


def test_a_cpu_that_was_the_cause_stays_one_while_its_average_holds_40_percent() -> None:
    """Two cores at 45 %, nobody at a core's worth: no cause afresh; once the CPU was the cause, it stays one."""
    procs = [proc(7, "python3 duty.py", user="root", gpu_index=None, cpu=60.0),
             proc(8, "python3 other.py", user="bob", gpu_index=None, cpu=30.0)]
    assert not [c for c in explain(snap([], procs, cpu=45.0, cores=2)).causes if c.kind == "cpu_load"]
    remembered = Remembered()
    assert "because of `python3 duty.py`" in remembered.explain(snap([], procs, cpu=55.0, cores=2)).headline
    kept = remembered.explain(snap([], procs, cpu=45.0, cores=2))
    assert kept.headline.startswith("The CPU is at 45 % (48 °C) because of `python3 duty.py`"), kept.headline
    assert not [c for c in remembered.explain(snap([], procs, cpu=35.0, cores=2)).causes if c.kind == "cpu_load"]
