"""``python -m cdk_ts.plan`` / ``cdk-ts-plan``: capacity, partitions, shards and monthly cost for a workload."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cdk_ts.plan import Tier, capacity, monthly_cost
from cdk_ts.plan.prices import US_EAST_1
from cdk_ts_runtime.periods import RotationPeriod


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors; keep its format
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _tier(text: str) -> Tier:
    try:
        read, write = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"tier {text!r} must be READ/WRITE units, e.g. 300/1000") from None
    if read < 1 or write < 1:
        raise argparse.ArgumentTypeError(f"tier {text!r} needs at least 1 read and 1 write unit")
    return Tier(read, write)


def parser() -> argparse.ArgumentParser:
    """The command line; every rate is per second."""
    p = _Parser(prog="cdk-ts-plan", description=__doc__)
    p.add_argument("--writes-per-second", type=float, required=True, help="peak writes/s")
    p.add_argument("--average-writes-per-second", type=float, help="average writes/s (default: the peak)")
    p.add_argument("--reads-per-second", type=float, default=0.0, help="peak reads/s")
    p.add_argument("--average-reads-per-second", type=float, help="average reads/s (default: the peak)")
    p.add_argument("--item-size", type=float, required=True, help="item size in bytes")
    p.add_argument("--consistent-reads", action="store_true", help="strongly consistent reads (default: eventual)")
    p.add_argument("--hot-key-share", type=float, default=0.0, help="share of writes on the hottest key (0-1)")
    p.add_argument("--period", default="daily", help="rotation period: " + ", ".join(x.value for x in RotationPeriod))
    p.add_argument("--retain-periods", type=int, default=30, help="periods kept, the current one included")
    p.add_argument("--current-tier", type=_tier, default=Tier(300, 1000), help="READ/WRITE (default 300/1000)")
    p.add_argument("--previous-tier", type=_tier, default=Tier(100, 1), help="READ/WRITE (default 100/1)")
    p.add_argument("--older-tier", type=_tier, default=Tier(1, 1), help="READ/WRITE (default 1/1)")
    p.add_argument("--plot", type=Path, help="write a PNG of monthly cost over retention to this file")
    return p


def main(argv: list[str] | None = None) -> int:
    """Print the plan; exit code 2 for bad input (with the reason on stderr).

    :param argv: the command-line arguments.
        Default: None — ``sys.argv[1:]``.
    """
    args = parser().parse_args(argv)
    try:
        period = RotationPeriod.parse(args.period)
        average_writes = (
            args.writes_per_second if args.average_writes_per_second is None else args.average_writes_per_second
        )
        average_reads = (
            args.reads_per_second if args.average_reads_per_second is None else args.average_reads_per_second
        )
        plan = capacity(
            args.writes_per_second,
            args.reads_per_second,
            args.item_size,
            consistent_reads=args.consistent_reads,
            hot_key_share=args.hot_key_share,
        )
        costs = [
            (
                retain,
                monthly_cost(
                    peak_writes_per_second=args.writes_per_second,
                    average_writes_per_second=average_writes,
                    peak_reads_per_second=args.reads_per_second,
                    average_reads_per_second=average_reads,
                    item_size_bytes=args.item_size,
                    period=period,
                    retain_periods=retain,
                    current=args.current_tier,
                    previous=args.previous_tier,
                    older=args.older_tier,
                    consistent_reads=args.consistent_reads,
                ),
            )
            for retain in sorted({2, max(2, args.retain_periods // 2), args.retain_periods, args.retain_periods * 2})
        ]
    except ValueError as error:
        print(f"cdk-ts-plan: error: {error}", file=sys.stderr)
        return 2
    cost = dict(costs)[args.retain_periods]
    print(
        f"Capacity for {args.writes_per_second:g} writes/s and {args.reads_per_second:g} reads/s "
        f"of {args.item_size:g}-byte items ({'strongly' if args.consistent_reads else 'eventually'} consistent)"
    )
    print(f"  write units per item   {plan.write_units_per_item}")
    print(f"  read units per item    {plan.read_units_per_item:g}")
    print(f"  WCU                    {plan.wcu}")
    print(f"  RCU                    {plan.rcu}")
    print(
        f"  partitions             {plan.partitions} (throughput {plan.partitions_by_throughput}, "
        f"size {plan.partitions_by_size})"
    )
    print(f"  shards per hot key     {plan.shards_per_hot_key} (hot key share {args.hot_key_share:g}, 20% headroom)")
    if plan.wcu > args.current_tier.write:
        print(f"  warning: the current tier's {args.current_tier.write} WCU is below the peak's {plan.wcu} WCU")
    print(
        f"\nMonthly cost, {period.value} tables, {args.retain_periods} periods retained "
        f"({cost.storage_gb:g} GB stored), USD"
    )
    print(f"  rotating tables with tiers   {cost.rotating_tiers:10.2f}")
    print(f"  one provisioned table        {cost.single_provisioned:10.2f}")
    print(f"  on-demand                    {cost.on_demand:10.2f}")
    for assumption in cost.assumptions:
        print(f"  - {assumption}")
    if args.plot:
        try:
            _plot(costs, period, args.plot)
        except ImportError:
            print("cdk-ts-plan: error: --plot needs matplotlib: pip install 'cdk-ts[plot]'", file=sys.stderr)
            return 2
        print(f"\nplot: {args.plot}")
    return 0


def _plot(costs, period: RotationPeriod, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    retains = [retain for retain, _cost in costs]
    fig, axis = plt.subplots(figsize=(7, 4))
    for label, attribute in (
        ("rotating tables with tiers", "rotating_tiers"),
        ("one provisioned table", "single_provisioned"),
        ("on-demand", "on_demand"),
    ):
        axis.plot(retains, [getattr(cost, attribute) for _retain, cost in costs], marker="o", label=label)
    axis.set_xlabel(f"{period.value} periods retained")
    axis.set_ylabel("USD per month")
    axis.set_title(f"DynamoDB monthly cost over retention ({US_EAST_1.region})")
    axis.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
