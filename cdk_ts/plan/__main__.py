"""``python -m cdk_ts.plan`` / ``cdk-ts-plan``: capacity, partitions, shards and monthly cost for a workload."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from cdk_ts._cli import quiet_on_closed_pipe
from cdk_ts.plan import CapacityPlan, StrategyComparison, capacity, compare_strategies
from cdk_ts.plan.prices import US_EAST_1, Prices
from cdk_ts_runtime._inputs import non_negative_float, positive_float, share_float, whole_flag
from cdk_ts_runtime.periods import RotationPeriod


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors; keep its format
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def parser() -> argparse.ArgumentParser:
    """The command line; every rate is per second."""
    p = _Parser(prog="cdk-ts-plan", description=__doc__)
    rate, price = non_negative_float, non_negative_float  # each refuses NaN, infinities and negatives, naming the flag
    p.add_argument("--writes-per-second", type=rate("--writes-per-second"), required=True, help="peak writes/s")
    p.add_argument("--average-writes-per-second", type=rate("--average-writes-per-second"),
                   help="average writes/s (default: the peak)")
    p.add_argument("--reads-per-second", type=rate("--reads-per-second"), default=0.0, help="peak reads/s")
    p.add_argument("--average-reads-per-second", type=rate("--average-reads-per-second"),
                   help="average reads/s (default: the peak)")
    p.add_argument("--item-size", type=positive_float("--item-size"), required=True, help="item size in bytes")
    p.add_argument("--consistent-reads", action="store_true", help="strongly consistent reads (default: eventual)")
    p.add_argument("--hot-key-share", type=share_float("--hot-key-share"), default=0.0,
                   help="share of writes on the hottest key (0-1)")
    p.add_argument("--period", default="daily", help="rotation period: " + ", ".join(x.value for x in RotationPeriod))
    p.add_argument("--retain-periods", type=whole_flag("--retain-periods", minimum=2), default=30,
                   help="periods kept, the current one included (>= 2)")
    p.add_argument("--archive", action="store_true", help="expired tables are exported to S3 (export cost)")
    p.add_argument("--warm-write-price", type=price("--warm-write-price"),
                   help="USD to raise warm throughput by 1,000 writes/s (unpriced)")
    p.add_argument("--warm-read-price", type=price("--warm-read-price"),
                   help="USD to raise warm throughput by 1,000 reads/s (unpriced)")
    p.add_argument("--export-price", type=price("--export-price"), help="USD per GB of a full export to S3 (unpriced)")
    p.add_argument("--plot", type=Path, help="write a PNG of monthly cost over retention to this file")
    return p


def main(argv: list[str] | None = None) -> int:
    """Print the plan; exit code 2 for bad input (with the reason on stderr).

    A closed stdout (``| head``) ends quietly (exit 141, as a shell reports SIGPIPE): never a traceback.

    :param argv: the command-line arguments.
        Default: None — ``sys.argv[1:]``.
    """
    return quiet_on_closed_pipe(lambda: _main(argv))


def _main(argv: list[str] | None) -> int:
    args = parser().parse_args(argv)
    prices = _prices(args)
    try:
        period = RotationPeriod.parse(args.period)
        comparisons = _comparisons(args, period, prices)
        comparison = dict(comparisons)[args.retain_periods]
        # partitions of one period's table (the rotation) and of one table holding every period (TTL)
        plan = capacity(
            args.writes_per_second, args.reads_per_second, args.item_size, consistent_reads=args.consistent_reads,
            hot_key_share=args.hot_key_share, storage_gb=comparison.storage_gb_per_period,
        )
        single = capacity(
            args.writes_per_second, args.reads_per_second, args.item_size, consistent_reads=args.consistent_reads,
            storage_gb=comparison.storage_gb,
        )
    except ValueError as error:
        print(f"cdk-ts-plan: error: {error}", file=sys.stderr)
        return 2
    _print_capacity(args, plan, single, comparison)
    _print_costs(args, period, comparison)
    return _write_plot(args, comparisons, period) if args.plot else 0


def _prices(args: argparse.Namespace) -> Prices:
    """The built-in prices with the warm-throughput and export prices of the command line."""
    return dataclasses.replace(
        US_EAST_1,
        warm_write_per_1000=args.warm_write_price,
        warm_read_per_1000=args.warm_read_price,
        export_gb=args.export_price,
        as_of=US_EAST_1.as_of + (
            "; warm-throughput/export prices from the command line"
            if {args.warm_write_price, args.warm_read_price, args.export_price} != {None} else ""
        ),
    )


def _comparisons(
    args: argparse.Namespace, period: RotationPeriod, prices: Prices
) -> list[tuple[int, StrategyComparison]]:
    """The strategies compared at the asked retention and around it (2, half, as asked, double), for the plot."""
    average_writes = (
        args.writes_per_second if args.average_writes_per_second is None else args.average_writes_per_second
    )
    average_reads = args.reads_per_second if args.average_reads_per_second is None else args.average_reads_per_second
    return [
        (
            retain,
            compare_strategies(
                peak_writes_per_second=args.writes_per_second,
                average_writes_per_second=average_writes,
                peak_reads_per_second=args.reads_per_second,
                average_reads_per_second=average_reads,
                item_size_bytes=args.item_size,
                period=period,
                retain_periods=retain,
                archive=args.archive,
                consistent_reads=args.consistent_reads,
                prices=prices,
            ),
        )
        for retain in sorted({2, max(2, args.retain_periods // 2), args.retain_periods, args.retain_periods * 2})
    ]


def _print_capacity(
    args: argparse.Namespace, plan: CapacityPlan, single: CapacityPlan, comparison: StrategyComparison
) -> None:
    """The capacity part of the report: units, partitions and shards."""
    print(
        f"Capacity for {args.writes_per_second:g} writes/s and {args.reads_per_second:g} reads/s "
        f"of {args.item_size:g}-byte items ({'strongly' if args.consistent_reads else 'eventually'} consistent)"
    )
    print(f"  write units per item   {plan.write_units_per_item}")
    print(f"  read units per item    {plan.read_units_per_item:g}")
    print(f"  WCU                    {plan.wcu}")
    print(f"  RCU                    {plan.rcu}")
    print(
        f"  partitions             {plan.partitions} per period table (throughput {plan.partitions_by_throughput}, "
        f"size {plan.partitions_by_size} for {comparison.storage_gb_per_period:g} GB); "
        f"{single.partitions} for one table of {comparison.storage_gb:g} GB"
    )
    print(f"  shards per hot key     {plan.shards_per_hot_key} (hot key share {args.hot_key_share:g}, 20% headroom)")


def _print_costs(args: argparse.Namespace, period: RotationPeriod, comparison: StrategyComparison) -> None:
    """The cost part of the report: one row per strategy, the cheapest marked, then what they assume."""
    print(
        f"\nMonthly cost at equal service (each sized to the peak), {period.value} tables, "
        f"{args.retain_periods} periods retained ({comparison.storage_gb:g} GB stored), USD"
    )
    print(f"  {'strategy':16} {'throughput':>10} {'storage':>10} {'warm':>8} {'exports':>8} {'total':>10}")
    cheapest = comparison.cheapest
    for cost in comparison.strategies:
        mark = ("  <- cheapest" + (" (a lower bound)" if cost.unpriced else "")) if cost is cheapest else ""
        total = f"{cost.total:.2f}" + ("+" if cost.unpriced else "")
        print(
            f"  {cost.name:16} {cost.throughput:10.2f} {cost.storage:10.2f} {_part(cost.warm_throughput):>8} "
            f"{_part(cost.exports):>8} {total:>10}{mark}"
        )
    for cost in comparison.strategies:
        print(f"  {cost.name}: {cost.description}")
    for assumption in comparison.assumptions:
        print(f"  - {assumption}")


def _write_plot(
    args: argparse.Namespace, comparisons: list[tuple[int, StrategyComparison]], period: RotationPeriod
) -> int:
    """Write ``--plot``; 2 with the reason on stderr when matplotlib is missing or the file cannot be written."""
    try:
        _plot(comparisons, period, args.plot)
    except ImportError:
        print("cdk-ts-plan: error: --plot needs matplotlib: pip install 'cdk-ts[plot]'", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"cdk-ts-plan: error: --plot {str(args.plot)!r} cannot be written: {error.strerror or error}",
              file=sys.stderr)
        return 2
    print(f"\nplot: {args.plot}")
    return 0


def _part(value: float | None) -> str:
    return "unpriced" if value is None else f"{value:.2f}"


def _plot(costs, period: RotationPeriod, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    retains = [retain for retain, _cost in costs]
    fig, axis = plt.subplots(figsize=(7, 4))
    names = [strategy.name for strategy in costs[0][1].strategies]
    for index, name in enumerate(names):
        totals = [comparison.strategies[index].total for _retain, comparison in costs]
        axis.plot(retains, totals, marker="o", label=name)
    axis.set_xlabel(f"{period.value} periods retained")
    axis.set_ylabel("USD per month")
    axis.set_title(f"DynamoDB monthly cost at equal service ({US_EAST_1.region})")
    axis.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
