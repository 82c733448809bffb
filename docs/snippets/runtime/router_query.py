import os
from datetime import UTC, datetime
from decimal import Decimal

from cdk_ts_runtime import PeriodRouter

router = PeriodRouter.from_env(os.environ)
router.put_item({"pk": 42, "sk": 1767225600000, "temperature": Decimal("21.5")})   # 2026-01-01T00:00Z
start, end = datetime(2025, 12, 30, tzinfo=UTC), datetime(2026, 1, 1, 23, 59, tzinfo=UTC)
items = router.query(42, start, end)   # every overlapping daily table, in parallel, in sort-key order
assert items == [{"pk": 42, "sk": 1767225600000, "temperature": Decimal("21.5")}]
