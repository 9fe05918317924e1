"""Which temperature a fan follows, learned from its history when nothing declares it.

A fan controller turns a temperature into a speed through a curve that only rises (more heat, never less air) and
reacts after a delay (a thermal mass, a controller's step time). So for each candidate temperature and each lag of
0-``MAX_LAG_S`` seconds the fan's speed is fitted as a non-decreasing function of that temperature ``lag`` seconds
earlier (isotonic regression, pool-adjacent-violators), and the pair whose fit leaves the least unexplained
variance wins. What comes out: the source, its lag, the curve (temperature -> speed) sampled at a few points, the
idle floor (the lowest speed while it runs), the fan-stop and start temperatures and their difference (the
controller's hysteresis), and a confidence: the share of the running speed's variance the fit explains,
discounted when the runner-up explains almost as much, and when what the fit leaves over is not noise.

The speed is fitted where the fan runs (a fan-stop's hysteresis band would otherwise read as lag). What a true
source leaves over is noise, uncorrelated from one second to the next; a distractor heated by the same load
explains much of the speed too, but what it leaves over drifts with the true source (lag-1 autocorrelation 0.7 and
up on generated plants, 0.1 and under for true sources, up to 0.66 for a stepped controller with hysteresis per
step). So the confidence falls to 0 as the leftover's autocorrelation goes from ``WHITE_AC`` to ``DRIFT_AC``: a
machine whose true source is not among the candidates names none.

The search is coarse-to-fine in lag (every 4 s, then the neighbours of the best), on a series resampled to
``STEP_S``. Validated on generated plants with a known truth (tests/unit/test_fanlearn.py prints the figures).
"""

from __future__ import annotations

import bisect
import operator
from collections.abc import Mapping, Sequence

from ..core.record import record

MAX_LAG_S = 20
STEP_S = 1.0
MIN_POINTS = 60  # a minute of history at least
MIN_SPREAD = 2.0  # a temperature that moved less than this (°C) explains nothing
CURVE_POINTS = 8
WHITE_AC = 0.6  # a leftover this correlated (lag-1) or less is noise
DRIFT_AC = 0.8  # this correlated or more, a drift: the fit is of the wrong temperature


@record
class Fit:
    """The temperature that best explains a fan's speed, and how."""

    source: str
    lag_s: float
    curve: tuple[tuple[float, float], ...]  # (°C, speed) points of the fitted non-decreasing curve
    floor: float | None  # the lowest speed while running
    stop_c: float | None  # below this it rests (fan-stop), when it was seen to stop
    start_c: float | None  # above this it starts again
    hysteresis_c: float | None  # start_c - stop_c
    confidence: float  # 0-1
    explained: float  # the share of the running speed's variance the fit explains (R²)
    runner_up: str | None
    drift: float = 0.0  # the leftover's lag-1 autocorrelation: near 0 for noise, 0.8 and up for the wrong source


def isotonic(ys: Sequence[float]) -> list[float]:
    """The non-decreasing sequence closest to ``ys`` in squared error (pool adjacent violators). Blocks are kept as
    (sum, size) and compared by cross-multiplying, so a merge divides nothing: this runs for every lag tried on every
    candidate temperature, the learner's hot loop."""
    sums: list[float] = []
    sizes: list[int] = []
    push_sum, push_size, pop_sum, pop_size = sums.append, sizes.append, sums.pop, sizes.pop
    for y in ys:
        total, size = y, 1
        while sums and sums[-1] * size > total * sizes[-1]:  # the block before has the higher mean
            total += pop_sum()
            size += pop_size()
        push_sum(total)
        push_size(size)
    out: list[float] = []
    for total, size in zip(sums, sizes, strict=True):
        out.extend([total / size] * size)
    return out


def _fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, list[float], list[float]]:
    """(unexplained share of variance, sorted temperatures, fitted speeds at them)."""
    order = sorted(range(len(xs)), key=xs.__getitem__)
    sx = [xs[i] for i in order]
    fitted = isotonic([ys[i] for i in order])
    mean = sum(ys) / len(ys)
    total = sum((y - mean) ** 2 for y in ys)
    residual = sum((ys[i] - f) ** 2 for i, f in zip(order, fitted, strict=True))
    return (residual / total if total > 0 else 1.0), sx, fitted


def _lagged(temps: Sequence[float], speeds: Sequence[float], lag: int) -> tuple[Sequence[float], Sequence[float]]:
    """Speed at t against temperature at t - lag (both on one grid)."""
    return (temps[: len(temps) - lag], speeds[lag:]) if lag else (temps, speeds)


@record
class _Score:
    unexplained: float  # of the running speed's variance
    drift: float  # the leftover's lag-1 autocorrelation over consecutive running seconds


def _score(temps: Sequence[float], speeds: Sequence[float], lag: int, rest: float) -> _Score:
    """How well the temperature ``lag`` earlier explains the speed where the fan runs."""
    xs, ys = _lagged(temps, speeds, lag)
    running = [i for i, y in enumerate(ys) if y > rest]
    if len(running) < MIN_POINTS // 2:
        return _Score(1.0, 1.0)
    rx, ry = [xs[i] for i in running], [ys[i] for i in running]
    order = sorted(range(len(rx)), key=rx.__getitem__)
    fitted = isotonic([ry[k] for k in order])
    left = [0.0] * len(rx)
    for k, f in zip(order, fitted, strict=True):
        left[k] = ry[k] - f
    mean_y = sum(ry) / len(ry)
    centred = [y - mean_y for y in ry]
    total = sum(map(operator.mul, centred, centred))
    power = sum(map(operator.mul, left, left))
    if total <= 0 or power <= 1e-12:
        return _Score(1.0 if total <= 0 else 0.0, 0.0)
    pairs = sum(left[k] * left[k - 1] for k in range(1, len(running)) if running[k] - running[k - 1] == 1)
    return _Score(power / total, pairs / power)


def _best_lag(temps: Sequence[float], speeds: Sequence[float], rest: float) -> tuple[_Score, int]:
    steps = int(MAX_LAG_S / STEP_S)
    coarse = {lag: _score(temps, speeds, lag, rest) for lag in range(0, steps + 1, 4)}
    best = min(coarse, key=lambda lag: coarse[lag].unexplained)
    for lag in range(max(0, best - 3), min(steps, best + 3) + 1):
        if lag not in coarse:
            coarse[lag] = _score(temps, speeds, lag, rest)
    best = min(coarse, key=lambda lag: coarse[lag].unexplained)
    return coarse[best], best


def _curve(sx: Sequence[float], fitted: Sequence[float]) -> tuple[tuple[float, float], ...]:
    low, high = sx[0], sx[-1]
    points = []
    for k in range(CURVE_POINTS):
        t = low + (high - low) * k / (CURVE_POINTS - 1)
        at = min(len(sx) - 1, bisect.bisect_left(sx, t))
        points.append((round(t, 1), round(fitted[at], 1)))
    return tuple(points)


def _stops(temps: Sequence[float], speeds: Sequence[float], lag: int, rest: float
           ) -> tuple[float | None, float | None]:
    """The mean temperature (``lag`` earlier) at which the fan stopped and at which it started again."""
    stops, starts = [], []
    for i in range(max(1, lag), len(speeds)):
        was, now = speeds[i - 1] <= rest, speeds[i] <= rest
        if now and not was:
            stops.append(temps[i - lag])
        elif was and not now:
            starts.append(temps[i - lag])
    return _mean(stops), _mean(starts)


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 1) if values else None


def learn(speeds: Sequence[float], candidates: Mapping[str, Sequence[float]], rest: float = 0.0) -> Fit | None:
    """The candidate temperature that best explains ``speeds`` (all series on one grid of ``STEP_S``, oldest first),
    or None when the history is too short or the speed never moved. ``rest`` is the speed at or below which the fan
    is at rest (0 % or 0 RPM)."""
    if len(speeds) < MIN_POINTS or max(speeds) - min(speeds) <= 0:
        return None
    scored = []
    for name, temps in candidates.items():
        if len(temps) != len(speeds) or max(temps) - min(temps) < MIN_SPREAD:
            continue
        score, lag = _best_lag(temps, speeds, rest)
        scored.append((score.unexplained, lag, name, score.drift))
    if not scored:
        return None
    scored.sort()
    unexplained, lag, name, drift = scored[0]
    explained = max(0.0, 1.0 - unexplained)
    runner = 1.0 - scored[1][0] if len(scored) > 1 else 0.0
    margin = min(1.0, max(0.0, (explained - runner) / 0.1)) if len(scored) > 1 else 1.0
    white = min(1.0, max(0.0, (DRIFT_AC - drift) / (DRIFT_AC - WHITE_AC)))
    xs, ys = _lagged(candidates[name], speeds, lag)
    running = [i for i, y in enumerate(ys) if y > rest]
    _, sx, fitted = _fit([xs[i] for i in running], [ys[i] for i in running])
    stop_c, start_c = _stops(candidates[name], speeds, lag, rest)
    return Fit(source=name, lag_s=lag * STEP_S, curve=_curve(sx, fitted),
               floor=round(min(ys[i] for i in running), 1) if running else None, stop_c=stop_c, start_c=start_c,
               hysteresis_c=round(start_c - stop_c, 1) if stop_c is not None and start_c is not None else None,
               confidence=round(explained * (0.5 + 0.5 * margin) * white, 2), explained=round(explained, 3),
               runner_up=scored[1][2] if len(scored) > 1 else None, drift=round(drift, 2))


def resample(points: Sequence[tuple[float, float]], start: float, end: float, step: float = STEP_S) -> list[float]:
    """``(t, value)`` points (oldest first) as values on a grid from ``start`` to ``end``: each grid time takes the
    last value at or before it (a sample holds until the next one)."""
    times = [t for t, _ in points]
    out = []
    t = start
    while t <= end + 1e-9:
        at = bisect.bisect_right(times, t) - 1
        out.append(points[max(0, at)][1])
        t += step
    return out
