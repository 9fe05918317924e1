"""The out-of-tree nct6687 driver reads an MSI board's system fans at registers that differ by board (its README:
fan_config default or msi_alt1, "motherboards which need this will show CPU/Pump RPMs but no data on System fans").
Every System Fan at 0 beside a CPU or pump fan that counts is then no more than possibly empty: the map may not fit
the board. Some at 0 beside others counting is the map working, and those are most likely empty headers. (Rows
from real boards' ``sensors``: an MSI X870 Tomahawk's, and the driver's README's own sample.)"""

from __future__ import annotations

from pathlib import Path

from app.fans import read
from app.fans.adapt import machine
from app.fans.answer import explained
from tests.unit.test_fan_readers import explain

HEAD = "nct6687-isa-0a20\nAdapter: ISA adapter\nCPU Fan:       1581 RPM  (min =  987 RPM, max = 1587 RPM)\n" \
       "Pump Fan:      3448 RPM  (min = 2371 RPM, max = 3478 RPM)\n"


def _empty(system: list[int]) -> tuple[str, dict[str, object]]:
    rows = "".join(f"System Fan #{n}: {rpm:>5} RPM  (min = {rpm:>4} RPM, max = {rpm:>4} RPM)\n"
                   for n, rpm in enumerate(system, start=1))
    findings = explained(machine(read.read(HEAD + rows)[0]))[0]
    (empty,) = [f for f in findings if f.kind == "empty-slots"]
    return empty.confidence, dict(empty.facts)


def test_every_system_fan_at_0_beside_the_cpu_fan_counting_may_be_the_map_not_fitting() -> None:
    confidence, facts = _empty([0, 0, 0, 0, 0, 0])
    assert confidence == "possible" and facts["map"] == "nct6687" and facts["count"] == 6


def test_some_system_fans_counting_is_the_map_working_and_the_zeros_most_likely_empty() -> None:
    confidence, facts = _empty([922, 953, 1393, 0, 1007, 0])
    assert confidence == "likely" and "map" not in facts and facts["count"] == 2


def test_golden_sentence_of_a_map_that_may_not_fit(tmp_path: Path) -> None:
    rows = "".join(f"System Fan #{n}:    0 RPM  (min =    0 RPM, max =    0 RPM)\n" for n in (1, 2))
    _, answer = explain(HEAD + rows, tmp_path)
    assert "(System Fan #1 (nct6687) and System Fan #2 (nct6687) may have no fan on them, or fans that nct6687 " \
           "does not count: every one of its fans read through the board's register map reads 0 while its others " \
           "count, as with a map that does not fit the board (the driver's fan_config parameter: default or " \
           "msi_alt1); a fan seen turning there is not counted, not stopped.)" in str(answer["sentence"])
