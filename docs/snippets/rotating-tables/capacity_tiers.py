from cdk_ts import AutoScaling, CapacityTier, RightSizing

current = CapacityTier.provisioned(300, 1000, right_size=RightSizing(headroom=1.3, floor=50, ceiling=3000))
spiky = CapacityTier.on_demand(
    max_write_request_units=8000,  # a cost guardrail (OnDemandThroughput)
    warm_write_units_per_second=6000,  # instantly available without provisioning it
    right_size=True,  # the next table's warm throughput follows the observed peak
)
scaled = CapacityTier.provisioned(300, 1000, AutoScaling(target_utilization=70, max_write_capacity=4000))
closed = CapacityTier.on_demand(table_class="STANDARD_INFREQUENT_ACCESS")
assert closed.is_on_demand and closed.describe() == "on-demand IA"
assert CapacityTier.pay_per_request().is_on_demand
