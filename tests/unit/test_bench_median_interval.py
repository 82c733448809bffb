"""``bench.synth.median_interval``: the interval the synth ratio is reported with holds the median as claimed."""

from __future__ import annotations

import json
import math
import random

import pytest

from bench.synth import _print_pooled, median_interval


def _coverage(n: int, drop: int) -> float:
    """Exact chance that [x_(drop+1), x_(n-drop)] of n draws holds the true median: 1 - 2 P(Bin(n, 1/2) <= drop)."""
    return 1 - 2 * sum(math.comb(n, j) for j in range(drop + 1)) / 2**n


@pytest.mark.parametrize("n", [6, 7, 9, 18, 27, 36])
def test_the_interval_is_the_narrowest_by_order_statistics_that_keeps_95_percent(n):
    values = [float(v) for v in range(1, n + 1)]  # x_(i) == i

    median, low, high = median_interval(values)

    drop = int(low) - 1
    assert median == (n + 1) / 2
    assert high == n - drop
    assert _coverage(n, drop) >= 0.95
    assert drop + 1 >= (n + 1) // 2 or _coverage(n, drop + 1) < 0.95  # dropping one more would claim too much


def test_under_six_values_the_interval_is_the_whole_range():
    assert median_interval([3.0, 1.0, 2.0, 5.0, 4.0]) == (3.0, 1.0, 5.0)


def test_the_order_of_the_values_does_not_matter():
    values = [1.31, 1.22, 1.40, 1.27, 1.19, 1.35, 1.29, 1.26, 1.33]
    shuffled = values[:]
    random.Random(7).shuffle(shuffled)

    assert median_interval(shuffled) == median_interval(values) == (1.29, 1.22, 1.35)


def test_pool_reports_wall_and_cpu_ratios_and_the_excess_over_every_run(tmp_path, capsys):
    wall = [[1.3, 1.0], [2.6, 2.0], [3.9, 3.0], [5.2, 4.0], [6.5, 5.0], [7.8, 6.0]]  # ratio 1.3, excess 0.3-1.8 s
    cpu = [[1.2 * floor, floor] for floor in (1.0, 2.0, 3.0)]
    (tmp_path / "a.json").write_text(json.dumps({"wall_pairs": wall[:3], "cpu_pairs": cpu}))
    (tmp_path / "b.json").write_text(json.dumps({"runs": [{"wall_pairs": wall[3:], "cpu_pairs": cpu}]}))

    _print_pooled([tmp_path / "a.json", tmp_path / "b.json"])

    assert capsys.readouterr().out.strip().splitlines() == [
        "paired ratio (2 runs in 2 file(s), 6 pairs): median 1.300x, 95 % interval 1.300x-1.300x",
        "paired CPU ratio: median 1.200x, 95 % interval 1.200x-1.200x",
        "the app's excess over the floor, wall: median 1.05 s, 95 % interval 0.30 s-1.80 s",
    ]
