from cdk_ts.plan import capacity, compare_strategies

plan = capacity(1000, 500, 2560, consistent_reads=False, hot_key_share=0.3, storage_gb=82.4)
assert (plan.wcu, plan.rcu, plan.shards_per_hot_key) == (3000, 250, 2)
assert (plan.partitions_by_throughput, plan.partitions_by_size, plan.partitions) == (4, 9, 9)

comparison = compare_strategies(
    peak_writes_per_second=1000, average_writes_per_second=400, peak_reads_per_second=600,
    average_reads_per_second=200, item_size_bytes=1000, period="daily", retain_periods=14,
)
costs = {strategy.name: strategy.total for strategy in comparison.strategies}
assert costs == {"2016-tiers": 632.42, "provisioned+ia": 552.86, "on-demand+warm": 739.74, "ttl-table": 615.62}
assert comparison.cheapest.name == "provisioned+ia"
