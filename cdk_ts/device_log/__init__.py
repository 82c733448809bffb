"""The device log, construct side: the device-status table with its two GSIs, ready for DeviceLogRepository.

The public names are here: ``DeviceLogTable`` (creates the table, or wraps ``existing_table``) and
``DeviceLogTableBase`` (what any device log table can do: grants, ``bind``, metrics;
``DeviceLogTable.from_table_name`` returns one for a table another stack or app deployed, from ``imported``).
The runtime side is ``cdk_ts_runtime._device_log`` (``cdk_ts_runtime.DeviceLogRepository``).
"""

from __future__ import annotations

from cdk_ts.device_log.base import DeviceLogTableBase
from cdk_ts.device_log.table import DeviceLogTable

__all__ = ["DeviceLogTable", "DeviceLogTableBase"]
