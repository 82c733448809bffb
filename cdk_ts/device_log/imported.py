"""What ``DeviceLogTable.from_table_name`` returns: a device log table another stack or app deployed."""

from __future__ import annotations

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts.device_log.base import DeviceLogTableBase
from cdk_ts_runtime._device_log import GSI_BY_OPERATOR, GSI_BY_SUPERVISOR


class _ImportedDeviceLogTable(DeviceLogTableBase):
    """A device log table deployed elsewhere, known by name: what ``DeviceLogTable.from_table_name`` returns.

    Creates nothing: imports the table as ``{construct_id}/Table`` with its indexes GSI1 and GSI2, so grants
    cover them. ``from_table_name`` checks and documents the arguments.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        table_name: str, encryption_key: kms.IKey | None, table_stream_arn: str | None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.encryption_key = encryption_key
        self.table = dynamodb.Table.from_table_attributes(
            self, "Table", table_name=table_name, encryption_key=encryption_key,
            table_stream_arn=table_stream_arn, global_indexes=[GSI_BY_OPERATOR, GSI_BY_SUPERVISOR],
        )
