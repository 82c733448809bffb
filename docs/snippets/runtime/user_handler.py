import os
from datetime import datetime
from decimal import Decimal

from cdk_ts_runtime import PeriodRouter


def handler(event, context):
    router = PeriodRouter.from_env(os.environ)  # table layout from the variables bind() set
    when = datetime.fromisoformat(event["time"])
    router.put_measurements(event["device_id"], when, {"temperature_c": Decimal(event["temperature_c"])})
    items = router.query(event["device_id"], when, when)
    return {"table": router.table_for(when), "items": [str(i["temperature_c"]) for i in items]}
