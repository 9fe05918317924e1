"""The learned source of a fan, validated on generated thermal plants with a known truth: a random curve (idle
floor, start and full-speed temperatures, fan-stop below a temperature with hysteresis on half of them), a lag of
0-20 s, two to five distractor sensors (some heated by the same load through another thermal mass), noise on every
reading. The right source in at least 95 % of 200 plants, the curve within 5 % of full speed; the figures printed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from app.collect.fanlearn import isotonic, learn, resample

PLANTS = 200
SECONDS = 1200


@dataclass
class Plant:
    speeds: list[float]
    sensors: dict[str, list[float]]
    source: str
    lag: int
    floor: float
    start_c: float
    full_c: float
    stop_c: float | None
    hysteresis_c: float

    def curve(self, celsius: float) -> float:
        if celsius <= self.start_c:
            return self.floor
        if celsius >= self.full_c:
            return 100.0
        return self.floor + (100.0 - self.floor) * (celsius - self.start_c) / (self.full_c - self.start_c)


def _load(rng: random.Random) -> list[float]:
    out: list[float] = []
    while len(out) < SECONDS:
        out.extend([rng.choice((0.0, 0.1, 0.3, 0.5, 0.8, 1.0))] * rng.randint(30, 200))
    return out[:SECONDS]


def _heat(rng: random.Random, load: list[float]) -> list[float]:
    """A thermal mass heated by ``load``: ambient plus gain x load, reached with a time constant."""
    ambient, gain, tau = rng.uniform(25, 35), rng.uniform(30, 55), rng.uniform(15, 80)
    t, out = ambient, []
    for level in load:
        t += (ambient + gain * level - t) / tau
        out.append(t)
    return out


def plant(seed: int) -> Plant:
    rng = random.Random(seed)
    shared = _load(rng)
    source = _heat(rng, shared)
    sensors = {"source": source}
    for d in range(rng.randint(2, 5)):
        if rng.random() < 0.5:  # heated by the same load through another mass, with a load of its own mixed in
            own = _load(rng)
            sensors[f"d{d}"] = _heat(rng, [0.6 * a + 0.4 * b for a, b in zip(shared, own, strict=True)])
        else:
            sensors[f"d{d}"] = _heat(rng, _load(rng))
    low, high = min(source), max(source)
    start = rng.uniform(low, low + 0.4 * (high - low))
    full = rng.uniform(start + 0.3 * (high - start), high + 10)
    truth = Plant([], {}, "source", rng.randint(0, 20), rng.uniform(20, 40), start, full, None, 0.0)
    if rng.random() < 0.5:
        truth.stop_c, truth.hysteresis_c = start - rng.uniform(0, 3), rng.uniform(0, 5)
    running = True
    for i in range(SECONDS):
        celsius = source[max(0, i - truth.lag)]
        if truth.stop_c is not None:
            running = celsius > truth.stop_c + truth.hysteresis_c if not running else celsius > truth.stop_c
        speed = truth.curve(celsius) if running else 0.0
        truth.speeds.append(max(0.0, min(100.0, speed + rng.gauss(0, 1.5))) if running else 0.0)
    truth.sensors = {name: [v + rng.gauss(0, 0.3) for v in values] for name, values in sensors.items()}
    names = list(truth.sensors)
    rng.shuffle(names)  # the order of the candidates says nothing
    truth.sensors = {name: truth.sensors[name] for name in names}
    return truth


def curve_error(truth: Plant, curve: tuple[tuple[float, float], ...]) -> float:
    """Mean distance of the fitted curve from the true one, in % of full speed, over the points outside the band
    where the fan may be either stopped or running (the hysteresis band)."""
    errors = []
    for celsius, speed in curve:
        if truth.stop_c is not None and celsius <= truth.stop_c + truth.hysteresis_c:
            continue
        errors.append(abs(speed - truth.curve(celsius)))
    return sum(errors) / len(errors) if errors else 0.0


@pytest.mark.parametrize("seed", [0, 6])  # two plants without fan-stop (hysteresis would read as lag)
def test_one_plant_in_detail(seed: int) -> None:
    truth = plant(seed)
    fit = learn(truth.speeds, truth.sensors)
    assert fit is not None and fit.source == "source"
    assert abs(fit.lag_s - truth.lag) <= 2
    assert curve_error(truth, fit.curve) < 5
    assert fit.confidence > 0.6 and fit.explained > 0.8


def test_the_source_and_curve_of_200_generated_plants() -> None:
    right, within, errors, lags = 0, 0, [], []
    for seed in range(PLANTS):
        truth = plant(seed)
        fit = learn(truth.speeds, truth.sensors)
        assert fit is not None
        if fit.source == "source":
            right += 1
            error = curve_error(truth, fit.curve)
            errors.append(error)
            within += error <= 5.0
            lags.append(abs(fit.lag_s - truth.lag))
    print(f"\nlearned source right in {right} of {PLANTS} plants ({100 * right / PLANTS:.1f} %); curve within 5 % "
          f"of full speed in {within} of {right} ({100 * within / right:.1f} %), mean error "
          f"{sum(errors) / len(errors):.2f} %, worst {max(errors):.2f} %; lag off by {sum(lags) / len(lags):.1f} s "
          f"on average")
    assert right >= 0.95 * PLANTS
    assert within >= 0.95 * right and sum(errors) / len(errors) <= 5.0


def test_hysteresis_and_floor_of_a_fan_stop_plant() -> None:
    seed = next(s for s in range(100) if plant(s).stop_c is not None and plant(s).hysteresis_c > 2)
    truth = plant(seed)
    fit = learn(truth.speeds, truth.sensors)
    assert fit is not None and fit.source == "source"
    assert fit.stop_c is not None and fit.hysteresis_c is not None
    assert abs(fit.hysteresis_c - truth.hysteresis_c) < 1.5
    assert fit.floor is not None and abs(fit.floor - truth.floor) < 6


def test_too_little_or_flat_history_learns_nothing() -> None:
    assert learn([50.0] * 30, {"a": [float(i) for i in range(30)]}) is None  # under a minute
    assert learn([50.0] * 100, {"a": [float(i) for i in range(100)]}) is None  # the speed never moved
    speeds = [float(i % 50) for i in range(100)]
    assert learn(speeds, {"flat": [40.0 + 0.1 * (i % 2) for i in range(100)]}) is None  # no candidate moved


def test_isotonic_pools_what_falls() -> None:
    assert isotonic([1, 3, 2, 4]) == [1, 2.5, 2.5, 4]
    assert isotonic([5, 4, 3]) == [4, 4, 4]
    assert isotonic([]) == []


def test_resample_holds_each_value_until_the_next() -> None:
    assert resample([(0.0, 1.0), (2.5, 2.0), (3.0, 3.0)], 0.0, 4.0) == [1.0, 1.0, 1.0, 3.0, 3.0]
