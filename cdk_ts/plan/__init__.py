"""Capacity and cost planning for DynamoDB time-series tables (pure Python; no AWS calls, no aws_cdk).

The unit rules: a write costs 1 WCU per started 1 KB of item, a strongly consistent read 1 RCU per
started 4 KB (an eventually consistent read half that); one partition serves at most 1,000 WCU/s
and 3,000 RCU/s and holds about 10 GB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cdk_ts.plan.prices import HOURS_PER_MONTH, SECONDS_PER_MONTH, US_EAST_1, Prices
from cdk_ts_runtime._inputs import number
from cdk_ts_runtime.errors import ValidationError
from cdk_ts_runtime.periods import RotationPeriod
from cdk_ts_runtime.rotation_config import NEW_ON_DEMAND_WARM_READS, NEW_ON_DEMAND_WARM_WRITES

PARTITION_WCU = 1000
PARTITION_RCU = 3000
PARTITION_GB = 10
KB = 1024
AVERAGE_PERIOD_DAYS = {
    RotationPeriod.DAILY: 1,
    RotationPeriod.WEEKLY: 7,
    RotationPeriod.MONTHLY: 365.25 / 12,
    RotationPeriod.QUARTERLY: 365.25 / 4,
    RotationPeriod.YEARLY: 365.25,
}


def _positive(name: str, value: float, *, allow_zero: bool = True) -> float:
    return number(name, value, minimum=0, above=not allow_zero)  # type: ignore[return-value]


def write_units_per_item(item_size_bytes: float) -> int:
    """WCU one write of an item of this size consumes (1 per started KB).

    :param item_size_bytes: the item's size in bytes (> 0).
    """
    return math.ceil(_positive("item_size_bytes", item_size_bytes, allow_zero=False) / KB)


def read_units_per_item(item_size_bytes: float, *, consistent_reads: bool = False) -> float:
    """RCU one read consumes: 1 per started 4 KB, half for an eventually consistent read.

    :param item_size_bytes: the item's size in bytes (> 0).
    :param consistent_reads: price a strongly consistent read.
        Default: False — an eventually consistent read, which costs half.
    """
    units = math.ceil(_positive("item_size_bytes", item_size_bytes, allow_zero=False) / (4 * KB))
    return units if consistent_reads else units / 2


@dataclass(frozen=True)
class CapacityPlan:
    """Provisioned capacity, partitions and shards for one workload (what :func:`capacity` returns).

    :param wcu: write capacity units the write rate needs.
    :param rcu: read capacity units the read rate needs.
    :param partitions_by_throughput: partitions the WCU and RCU need (1,000 WCU and 3,000 RCU each).
    :param partitions_by_size: partitions the stored data needs (about 10 GB each).
    :param shards_per_hot_key: shards the hottest partition key needs to stay under one partition's
        1,000 WCU/s (1 when no key is hot).
    :param write_units_per_item: WCU one write of an item consumes.
    :param read_units_per_item: RCU one read of an item consumes.
    """

    wcu: int
    rcu: int
    partitions_by_throughput: int
    partitions_by_size: int
    shards_per_hot_key: int
    write_units_per_item: int
    read_units_per_item: float

    @property
    def partitions(self) -> int:
        """Partitions the table needs: the larger of the throughput and size figures."""
        return max(1, self.partitions_by_throughput, self.partitions_by_size)


def capacity(
    writes_per_second: float,
    reads_per_second: float,
    item_size_bytes: float,
    *,
    consistent_reads: bool = False,
    hot_key_share: float = 0.0,
    storage_gb: float = 0.0,
    headroom: float = 0.2,
) -> CapacityPlan:
    """WCU/RCU for a rate of writes and reads, partitions needed, and shards for the hottest key.

    :param writes_per_second: items written per second (>= 0).
    :param reads_per_second: items read per second (>= 0).
    :param item_size_bytes: the item's size in bytes (> 0).
    :param consistent_reads: reads are strongly consistent.
        Default: False — eventually consistent reads, at half the RCU.
    :param hot_key_share: the fraction (0-1) of writes that go to the single hottest partition key.
        Default: 0.0 — no hot key; ``shards_per_hot_key`` is 1.
    :param storage_gb: data stored, for the partitions the size needs.
        Default: 0.0 — size is ignored.
    :param headroom: extra share of the hot key's WCU its shards are sized for (0 to 10).
        Default: 0.2 — shards get 20% above the hot key's rate.
    :raises ValueError: for a negative or non-numeric rate or an out-of-range share or headroom.
    """
    _positive("writes_per_second", writes_per_second)
    _positive("reads_per_second", reads_per_second)
    _positive("storage_gb", storage_gb)
    if not 0 <= _positive("hot_key_share", hot_key_share) <= 1:
        raise ValidationError(f"hot_key_share {hot_key_share} must be between 0 and 1")
    if not 0 <= _positive("headroom", headroom) < 10:
        raise ValidationError(f"headroom {headroom} must be between 0 and 10")
    per_write = write_units_per_item(item_size_bytes)
    per_read = read_units_per_item(item_size_bytes, consistent_reads=consistent_reads)
    wcu = math.ceil(writes_per_second * per_write)
    rcu = math.ceil(reads_per_second * per_read)
    hot_wcu = hot_key_share * wcu * (1 + headroom)
    return CapacityPlan(
        wcu=wcu,
        rcu=rcu,
        partitions_by_throughput=math.ceil(rcu / PARTITION_RCU + wcu / PARTITION_WCU),
        partitions_by_size=math.ceil(storage_gb / PARTITION_GB),
        shards_per_hot_key=max(1, math.ceil(hot_wcu / PARTITION_WCU)),
        write_units_per_item=per_write,
        read_units_per_item=per_read,
    )


def _priced(quantity: float, price: float | None) -> float | None:
    """``quantity`` at ``price``: nothing to pay costs 0 even unpriced; otherwise None when there is no price."""
    if quantity == 0:
        return 0.0
    return None if price is None else quantity * price


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


@dataclass(frozen=True)
class StrategyCost:
    """Monthly USD cost of one strategy, by part.

    :param name: the strategy's short name, ``2016-tiers``, ``provisioned+ia``, ``on-demand+warm``, ``ttl-table``.
    :param description: what the strategy does, one line.
    :param throughput: provisioned capacity-hours or on-demand request units.
    :param storage: GB-months at each table's class.
    :param warm_throughput: raising each new table's warm throughput to the peak (charged once per table);
        None when the strategy needs it but the prices have no figure for it.
    :param exports: exporting each expired table to S3 (only with ``archive``); None when unpriced.
    """

    name: str
    description: str
    throughput: float
    storage: float
    warm_throughput: float | None
    exports: float | None

    @property
    def unpriced(self) -> tuple[str, ...]:
        """The parts this strategy incurs that the prices give no figure for: its total is a lower bound."""
        return tuple(
            part for part, value in (("warm_throughput", self.warm_throughput), ("exports", self.exports))
            if value is None
        )

    @property
    def total(self) -> float:
        """The sum of the priced parts (a lower bound when :attr:`unpriced` is not empty)."""
        return round(self.throughput + self.storage + (self.warm_throughput or 0.0) + (self.exports or 0.0), 2)


@dataclass(frozen=True)
class StrategyComparison:
    """Four ways to hold the same workload at the same service (each sized to the peak), cheapest marked.

    :param strategies: the four costs, in the order (a) to (d).
    :param peak: capacity the peak needs (with partitions counted for one period's data).
    :param storage_gb_per_period: data one period adds.
    :param storage_gb: data held at steady state (``retain_periods`` periods).
    :param assumptions: what the figures assume, one sentence each.
    """

    strategies: list[StrategyCost]
    peak: CapacityPlan
    storage_gb_per_period: float
    storage_gb: float
    assumptions: list[str]

    @property
    def cheapest(self) -> StrategyCost:
        """The strategy with the lowest total."""
        return min(self.strategies, key=lambda s: s.total)


def compare_strategies(
    *,
    peak_writes_per_second: float,
    average_writes_per_second: float,
    peak_reads_per_second: float,
    average_reads_per_second: float,
    item_size_bytes: float,
    period: RotationPeriod | str,
    retain_periods: int,
    archive: bool = False,
    consistent_reads: bool = False,
    prices: Prices = US_EAST_1,
) -> StrategyComparison:
    """Compare four strategies for one workload, each able to serve the peak (equal service).

    (a) ``2016-tiers``: provisioned current table at the peak, previous at 100/1, older at 1/1 (Standard).
    (b) ``provisioned+ia``: provisioned current table at the peak; closed periods on-demand Standard-IA
    (idle: storage only). (c) ``on-demand+warm``: every table on-demand, billed for the average rates; each
    new table's warm throughput raised to the peak (above what a new on-demand table already has); closed
    periods Standard-IA. (d) ``ttl-table``: one provisioned table at the peak, TTL deletes expired items
    (free), no rotation and nothing to export. Reads are assumed to go to the current period.

    :param peak_writes_per_second: items written per second at the peak.
    :param average_writes_per_second: items written per second on average (storage, on-demand bill).
    :param peak_reads_per_second: items read per second at the peak.
    :param average_reads_per_second: items read per second on average.
    :param item_size_bytes: the item's size in bytes (> 0).
    :param period: the rotation period (a ``RotationPeriod`` or its value).
    :param retain_periods: periods kept, counting the current one (>= 2).
    :param archive: expired tables are exported to S3 before deletion (strategies a-c).
        Default: False — no export cost.
    :param consistent_reads: reads are strongly consistent.
        Default: False — eventually consistent.
    :param prices: the prices to use.
        Default: ``US_EAST_1`` (see :mod:`cdk_ts.plan.prices` for which figures are verified).
    :raises ValueError: for fewer than 2 retained periods or average rates above the peaks.
    """
    period = RotationPeriod.parse(period)
    _check_workload(
        retain_periods, item_size_bytes, peak_writes_per_second=peak_writes_per_second,
        average_writes_per_second=average_writes_per_second, peak_reads_per_second=peak_reads_per_second,
        average_reads_per_second=average_reads_per_second,
    )
    period_hours = AVERAGE_PERIOD_DAYS[period] * 24
    per_period_gb = average_writes_per_second * period_hours * 3600 * item_size_bytes / KB**3
    storage_gb = per_period_gb * retain_periods
    peak = capacity(
        peak_writes_per_second, peak_reads_per_second, item_size_bytes,
        consistent_reads=consistent_reads, storage_gb=per_period_gb,
    )
    new_tables_per_month = HOURS_PER_MONTH / period_hours
    strategies = _strategy_costs(
        peak, per_period_gb, retain_periods, new_tables_per_month, prices, archive=archive,
        peak_rates=(peak_writes_per_second, peak_reads_per_second),
        average_rates=(average_writes_per_second, average_reads_per_second),
    )
    return StrategyComparison(
        strategies=strategies,
        peak=peak,
        storage_gb_per_period=round(per_period_gb, 3),
        storage_gb=round(storage_gb, 3),
        assumptions=[
            f"prices: {prices.region}, {prices.as_of}",
            f"every strategy serves the peak: {peak.rcu} RCU / {peak.wcu} WCU provisioned, or on-demand",
            f"{retain_periods} {period.value} periods of {per_period_gb:.3f} GB each; reads go to the current period",
            f"{new_tables_per_month:.2f} new tables a month; warm throughput above {NEW_ON_DEMAND_WARM_READS} reads / "
            f"{NEW_ON_DEMAND_WARM_WRITES} writes per second is charged once per new table",
            "no free tier, no reserved capacity, no auto scaling, no GSIs; "
            + ("each expired table exported once" if archive else "no exports"),
            *_unpriced_note(strategies),
        ],
    )


def _check_workload(retain_periods: int, item_size_bytes: float, **rates: float) -> None:
    """Refuse fewer than 2 retained periods, negative rates, an empty item, or average rates above the peaks."""
    if not isinstance(retain_periods, int) or isinstance(retain_periods, bool) or retain_periods < 2:
        raise ValidationError(f"retain_periods {retain_periods!r} must be a whole number >= 2")
    for name, value in rates.items():
        _positive(name, value)
    _positive("item_size_bytes", item_size_bytes, allow_zero=False)
    if (
        rates["average_writes_per_second"] > rates["peak_writes_per_second"]
        or rates["average_reads_per_second"] > rates["peak_reads_per_second"]
    ):
        raise ValidationError("average rates must not exceed the peak rates")


def _strategy_costs(
    peak: CapacityPlan, per_period_gb: float, retain_periods: int, new_tables_per_month: float, prices: Prices, *,
    archive: bool, peak_rates: tuple[float, float], average_rates: tuple[float, float],
) -> list[StrategyCost]:
    """The monthly costs of strategies (a) to (d) of :func:`compare_strategies`; rates are (writes, reads) a second."""
    closed = retain_periods - 1

    def hours(read: float, write: float) -> float:
        return HOURS_PER_MONTH * (read * prices.rcu_hour + write * prices.wcu_hour)

    standard_storage = per_period_gb * retain_periods * prices.storage_gb_month
    mixed_storage = per_period_gb * prices.storage_gb_month + closed * per_period_gb * prices.ia_storage_gb_month
    exports = _priced(new_tables_per_month * per_period_gb, prices.export_gb) if archive else 0.0
    on_demand = SECONDS_PER_MONTH * (
        average_rates[0] * peak.write_units_per_item * prices.write_request_unit
        + average_rates[1] * peak.read_units_per_item * prices.read_request_unit
    )
    warm = _warm_throughput_cost(peak, peak_rates, new_tables_per_month, prices)
    return [
        StrategyCost(
            "2016-tiers", "provisioned: current at the peak, previous 100/1, older 1/1, Standard",
            round(hours(peak.rcu, peak.wcu) + hours(100, 1) + hours(closed - 1, closed - 1), 2),
            round(standard_storage, 2), 0.0, _round(exports),
        ),
        StrategyCost(
            "provisioned+ia", "provisioned current at the peak; closed periods on-demand Standard-IA (idle)",
            round(hours(peak.rcu, peak.wcu), 2), round(mixed_storage, 2), 0.0, _round(exports),
        ),
        StrategyCost(
            "on-demand+warm", "on-demand everywhere, next table pre-warmed to the peak; closed periods Standard-IA",
            round(on_demand, 2), round(mixed_storage, 2), _round(warm), _round(exports),
        ),
        StrategyCost(
            "ttl-table", "one provisioned table at the peak, TTL deletes expired items, no rotation",
            round(hours(peak.rcu, peak.wcu), 2), round(standard_storage, 2), 0.0, 0.0,
        ),
    ]


def _warm_throughput_cost(
    peak: CapacityPlan, peak_rates: tuple[float, float], new_tables_per_month: float, prices: Prices
) -> float | None:
    """Raising each new table's warm throughput to the peak, above what a new on-demand table has; None if unpriced."""
    warm_writes = max(0.0, peak_rates[0] * peak.write_units_per_item - NEW_ON_DEMAND_WARM_WRITES)
    warm_reads = max(0.0, peak_rates[1] * peak.read_units_per_item - NEW_ON_DEMAND_WARM_READS)
    warm_reads_cost = _priced(new_tables_per_month * warm_reads / 1000, prices.warm_read_per_1000)
    warm_writes_cost = _priced(new_tables_per_month * warm_writes / 1000, prices.warm_write_per_1000)
    return None if warm_reads_cost is None or warm_writes_cost is None else warm_reads_cost + warm_writes_cost


def _unpriced_note(strategies: list[StrategyCost]) -> list[str]:
    parts = sorted({part for cost in strategies for part in cost.unpriced})
    if not parts:
        return []
    return [
        f"unpriced: {', '.join(parts)} (no published price in these prices; pass your own): "
        "totals marked + are lower bounds"
    ]
