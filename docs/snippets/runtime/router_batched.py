import os
from datetime import UTC, datetime, timedelta
from decimal import Decimal

from cdk_ts_runtime import PeriodRouter

router = PeriodRouter.from_env(os.environ)
now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
router.put_measurements(device_id=42, time=now, measures={"temp": Decimal("21.5"), "rpm": 1450})  # one item
readings = [(7, now + timedelta(seconds=s), {"temp": Decimal("20.1"), "rpm": 1400 + s}) for s in range(60)]
with router.batch_writer() as batch:                     # BatchWriteItem, 25 per call, grouped by period table
    for device, time, measures in readings:
        batch.put_measurements(device, time, measures)
items = [router.measurement_item(8, now + timedelta(minutes=m), {"temp": Decimal("19.9")}) for m in range(30)]
router.put_items(items)                                  # the same for ready-made items
assert len(router.query(7, now, now + timedelta(minutes=1))) == 60
