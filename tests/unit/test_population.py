"""The fast loop's sample of a generated population (tests/support/population.py): a subset of the whole, never
empty, and a bad setting stops the run instead of running everything or nothing."""

from __future__ import annotations

import pytest

from tests.support import population


def test_the_whole_population_unless_a_sample_is_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FANWHY_TEST_SAMPLE", raising=False)
    assert list(population.members(range(200))) == list(range(200)) and population.size(100_000) == 100_000


def test_a_sample_is_every_nth_member_of_the_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FANWHY_TEST_SAMPLE", "5")
    assert list(population.members(range(200))) == list(range(0, 200, 5))
    assert population.size(600) == 120 and population.size(4) == 1 and population.size(1) == 1


@pytest.mark.parametrize("value", ["0", "-1", "five", "2.5", ""])
def test_a_bad_sample_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("FANWHY_TEST_SAMPLE", value)
    with pytest.raises(ValueError, match="FANWHY_TEST_SAMPLE must be a whole number"):
        population.stride()
