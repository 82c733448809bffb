"""The capacity and cost planner against hand-worked examples, and its command line."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys

import pytest

from cdk_ts.plan import capacity, compare_strategies, read_units_per_item, write_units_per_item
from cdk_ts.plan.__main__ import main
from cdk_ts.plan.prices import US_EAST_1


def test_1000_writes_per_second_of_2_5_kb_items_need_3000_wcu():
    assert capacity(1000, 0, 2.5 * 1024).wcu == 3000


def test_500_reads_per_second_of_9_kb_items():
    assert capacity(0, 500, 9 * 1024, consistent_reads=True).rcu == 1500
    assert capacity(0, 500, 9 * 1024).rcu == 750


@pytest.mark.parametrize(("size", "units"), [(1, 1), (1024, 1), (1025, 2), (400 * 1024, 400)])
def test_write_units_round_up_per_started_kb(size, units):
    assert write_units_per_item(size) == units


@pytest.mark.parametrize(
    ("size", "consistent", "units"), [(4096, True, 1), (4097, True, 2), (4097, False, 1), (100, False, 0.5)]
)
def test_read_units_round_up_per_started_4_kb_and_halve_for_eventual(size, consistent, units):
    assert read_units_per_item(size, consistent_reads=consistent) == units


def test_partitions_by_throughput_and_by_size():
    plan = capacity(2500, 6000, 1024, consistent_reads=True, storage_gb=95)
    # 2,500 WCU / 1,000 + 6,000 RCU / 3,000 = 4.5 -> 5; 95 GB / 10 GB -> 10
    assert (plan.partitions_by_throughput, plan.partitions_by_size, plan.partitions) == (5, 10, 10)


def test_shards_for_a_hot_key_keep_20_percent_headroom():
    # 40% of 3,000 WCU on one key = 1,200 WCU/s; with 20% headroom 1,440 -> 2 partitions' worth
    assert capacity(3000, 0, 1000, hot_key_share=0.4).shards_per_hot_key == 2
    assert capacity(100, 0, 1000, hot_key_share=1.0).shards_per_hot_key == 1


#: 1,000 writes/s peak (400 average) and 600 reads/s peak (200 average) of 1,000-byte items, daily tables, 14
#: retained: the workload of ``TestStrategies``' hand-computed figures; each bad-input case changes one value.
WORKLOAD = dict(
    peak_writes_per_second=1000, average_writes_per_second=400, peak_reads_per_second=600,
    average_reads_per_second=200, item_size_bytes=1000, period="daily", retain_periods=14,
)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: capacity(-1, 0, 100), "writes_per_second -1 must be a finite number >= 0"),
        (lambda: capacity(1, 0, 0), "item_size_bytes 0 must be a finite number > 0"),
        (lambda: capacity(1, 0, 10, hot_key_share=1.5), "hot_key_share 1.5 must be between 0 and 1"),
        (lambda: capacity(1, 0, 500_000), r"item_size_bytes 500000 must be .*<= 409600.*400 KB"),
        (lambda: write_units_per_item(409_601), r"item_size_bytes 409601 must be .*<= 409600"),
        (lambda: compare_strategies(**{**WORKLOAD, "period": "hourly"}), "period 'hourly' is not one of"),
        (
            lambda: compare_strategies(**{**WORKLOAD, "average_writes_per_second": 2000}),
            "average rates must not exceed the peak",
        ),
    ],
)
def test_bad_input_is_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_cli_prints_the_plan(capsys):
    assert (
        main(["--writes-per-second", "1000", "--item-size", "2560", "--reads-per-second", "500", "--consistent-reads"])
        == 0
    )
    out = capsys.readouterr().out
    assert "WCU                    3000" in out
    assert "RCU                    500" in out
    assert "2016-tiers" in out and "<- cheapest" in out and "us-east-1" in out


@pytest.mark.parametrize(
    "argv",
    [
        ["--writes-per-second", "-5", "--item-size", "100"],
        ["--writes-per-second", "5", "--item-size", "0"],
        ["--writes-per-second", "5", "--item-size", "10", "--period", "hourly"],
        ["--writes-per-second", "5", "--item-size", "10", "--retain-periods", "1"],
        ["--item-size", "10"],
    ],
)
def test_cli_bad_input_exits_2_with_the_reason(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2
    assert "error" in capsys.readouterr().err


def test_cli_writes_a_png_chart(tmp_path):
    pytest.importorskip("matplotlib")
    path = tmp_path / "cost.png"
    assert main(["--writes-per-second", "100", "--item-size", "500", "--plot", str(path)]) == 0
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_module_runs_as_a_command_without_starting_the_cdk_runtime():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import runpy, sys; sys.argv=['cdk-ts-plan','--writes-per-second','10','--item-size','100'];"
            "runpy.run_module('cdk_ts.plan', run_name='__main__')",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "WCU                    10" in result.stdout
    check = subprocess.run(
        [sys.executable, "-c", "import sys, cdk_ts.plan; print('aws_cdk' in sys.modules, 'boto3' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert check.stdout.strip() == "False False"


class TestStrategies:
    """Hand-computed figures: 1,000 writes/s peak (400 average) and 600 reads/s peak (200 average) of 1,000-byte
    items, daily tables, 14 retained: 1,000 WCU and 300 RCU at the peak."""

    def costs(self, **overrides):
        comparison = compare_strategies(**{**WORKLOAD, **overrides})
        return comparison, {s.name: s for s in comparison.strategies}

    def test_storage_and_partitions_by_size(self):
        comparison, _ = self.costs()
        per_period = 400 * 86400 * 1000 / 1024**3  # 32.187 GB
        assert comparison.storage_gb_per_period == pytest.approx(per_period, abs=0.001)
        assert comparison.storage_gb == pytest.approx(14 * per_period, abs=0.01)
        assert (comparison.peak.wcu, comparison.peak.rcu, comparison.peak.partitions_by_size) == (1000, 300, 4)

    def test_each_strategy_against_hand_computed_parts(self):
        _comparison, costs = self.costs()
        gb = 400 * 86400 * 1000 / 1024**3
        peak_hours = 730 * (300 * 0.00013 + 1000 * 0.00065)  # 502.97
        assert costs["2016-tiers"].throughput == pytest.approx(
            peak_hours + 730 * (100 * 0.00013 + 1 * 0.00065) + 730 * 12 * (0.00013 + 0.00065), abs=0.01)
        assert costs["2016-tiers"].storage == pytest.approx(14 * gb * 0.25, abs=0.01)
        assert costs["provisioned+ia"].throughput == pytest.approx(peak_hours, abs=0.01)
        assert costs["provisioned+ia"].storage == pytest.approx(gb * 0.25 + 13 * gb * 0.10, abs=0.01)
        on_demand = 730 * 3600 * (400 * 1 * 0.625e-6 + 200 * 0.5 * 0.125e-6)  # 689.85
        assert costs["on-demand+warm"].throughput == pytest.approx(on_demand, abs=0.01)
        assert costs["on-demand+warm"].warm_throughput == 0  # 1,000 WCU / 300 RCU: below a new table's warm
        assert costs["ttl-table"].throughput == pytest.approx(peak_hours, abs=0.01)
        assert costs["ttl-table"].storage == pytest.approx(14 * gb * 0.25, abs=0.01)
        assert all(c.exports == 0 for c in costs.values())

    def test_the_cheapest_is_marked(self):
        comparison, costs = self.costs()
        assert comparison.cheapest.name == "provisioned+ia"
        assert comparison.cheapest.total == pytest.approx(502.97 + 49.89, abs=0.02)

    def test_warm_throughput_is_charged_once_per_new_table_above_the_on_demand_baseline(self):
        prices = dataclasses.replace(US_EAST_1, warm_write_per_1000=0.013, warm_read_per_1000=0.0026)
        _comparison, costs = self.costs(peak_writes_per_second=10000, peak_reads_per_second=30000, prices=prices)
        # writes: 10,000 - 4,000 = 6,000 units/s; reads: 30,000 x 0.5 - 12,000 = 3,000 units/s
        per_table = 6 * 0.013 + 3 * 0.0026
        assert costs["on-demand+warm"].warm_throughput == pytest.approx(730 / 24 * per_table, abs=0.01)

    def test_exports_cost_one_full_export_per_expired_table(self):
        _comparison, costs = self.costs(archive=True, prices=dataclasses.replace(US_EAST_1, export_gb=0.10))
        gb = 400 * 86400 * 1000 / 1024**3
        assert costs["provisioned+ia"].exports == pytest.approx(730 / 24 * gb * 0.10, abs=0.01)
        assert costs["ttl-table"].exports == 0

    def test_parts_without_a_published_price_are_unpriced_not_invented(self):
        comparison, costs = self.costs(peak_writes_per_second=10000, archive=True)
        assert costs["on-demand+warm"].warm_throughput is None
        assert costs["on-demand+warm"].unpriced == ("warm_throughput", "exports")
        assert costs["on-demand+warm"].total == pytest.approx(
            costs["on-demand+warm"].throughput + costs["on-demand+warm"].storage, abs=0.01)
        assert costs["ttl-table"].unpriced == ()  # nothing to export, no warm throughput to raise
        assert costs["2016-tiers"].warm_throughput == 0.0
        assert any(a.startswith("unpriced: exports, warm_throughput") for a in comparison.assumptions)

    def test_without_warm_or_exports_nothing_is_unpriced(self):
        comparison, costs = self.costs()
        assert all(c.unpriced == () for c in costs.values())
        assert not any(a.startswith("unpriced") for a in comparison.assumptions)


def test_cli_marks_unpriced_parts_and_lower_bounds(capsys):
    argv = ["--writes-per-second", "10000", "--average-writes-per-second", "400", "--item-size", "1000",
            "--retain-periods", "14", "--archive"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    on_demand = next(line for line in out.splitlines() if line.startswith("  on-demand+warm "))
    assert on_demand.split()[3:5] == ["unpriced", "unpriced"]
    assert on_demand.split()[5].endswith("+")
    assert "<- cheapest (a lower bound)" in on_demand
    assert main([*argv, "--warm-write-price", "0.013", "--warm-read-price", "0.0026", "--export-price", "0.1"]) == 0
    priced = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("  on-demand+warm "))
    assert "unpriced" not in priced and not priced.split()[5].endswith("+")


def test_cli_counts_partitions_by_the_stored_size(capsys):
    argv = ["--writes-per-second", "1000", "--average-writes-per-second", "400", "--item-size", "2560",
            "--reads-per-second", "500", "--retain-periods", "14"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "partitions             9 per period table (throughput 4, size 9 for 82.397 GB)" in out


def _cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """``cdk-ts ARGV`` as the console's main runs it: exit code, stdout, stderr."""
    from cdk_ts.console.__main__ import main as console_main

    try:
        code = console_main(argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cdk_ts_plan_errors_name_the_flag_and_cdk_ts_plan(capsys):
    code, out, err = _cli(["plan", "--writes-per-second", "-5", "--item-size", "100"], capsys)
    assert code == 2 and out == ""
    assert re.search(r"cdk-ts plan: error: argument --writes-per-second: -5(\.0)? must be a finite number >= 0", err)
    assert err.startswith("usage: cdk-ts plan ") and "cdk-ts-plan" not in err


def test_an_average_above_its_peak_names_both_flags(capsys):
    code, _out, err = _cli(["plan", "--writes-per-second", "5", "--average-writes-per-second", "10",
                            "--item-size", "100"], capsys)
    assert code == 2
    assert "cdk-ts plan: error: --average-writes-per-second 10 is above --writes-per-second 5" in err, err


def test_an_item_over_dynamodbs_400_kb_is_refused_and_400_kb_itself_is_planned(capsys):
    # DynamoDB's item size limit: 400 KB (409,600 bytes), attribute names included
    code, out, err = _cli(["plan", "--writes-per-second", "5", "--item-size", "500000"], capsys)
    assert code == 2 and out == ""
    assert re.search(r"argument --item-size: 500000(\.0)? must be", err) and "<= 409600" in err and "400 KB" in err, err
    code, out, _err = _cli(["plan", "--writes-per-second", "5", "--item-size", "409600"], capsys)
    assert code == 0 and "write units per item   400" in out


def test_the_standalone_command_keeps_its_name(capsys):
    try:
        code = main(["--writes-per-second", "-5", "--item-size", "100"])
    except SystemExit as exit_:
        code = exit_.code
    assert code == 2 and "cdk-ts-plan: error: argument --writes-per-second:" in capsys.readouterr().err
