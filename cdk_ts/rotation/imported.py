"""What ``RotatingTimeSeriesTables.from_table_prefix`` returns: period tables another stack or app rotates."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import aws_dynamodb as dynamodb
from constructs import Construct

from cdk_ts._import_checks import check_key
from cdk_ts._validation import Problems
from cdk_ts.rotation.base import RotatingTimeSeriesTablesBase, literal_prefix, table_layout
from cdk_ts_runtime._table_layout import TableLayout


class _ImportedPeriodTables(RotatingTimeSeriesTablesBase):
    """Period tables another stack or app rotates: what ``RotatingTimeSeriesTables.from_table_prefix`` returns.

    Creates nothing. It grants on the same ``?`` patterns as the owning construct (``{prefix}_????-??-??``
    for daily), in the account and Region of ``scope``'s stack; ``bind`` sets the same environment for
    ``PeriodRouter.from_env``; its ``metric_*`` methods and ``dashboard_widgets`` name the same tables and
    the metrics the owner's rotation function publishes. ``from_table_prefix`` checks the owner's values;
    this constructor (``RotatingTimeSeriesTablesBase``'s) takes the layout it checked.
    """


def imported_layout(
    scope: Construct, construct_id: str, table_prefix: str, layout_options: Mapping[str, Any], *,
    encryption_key: object = None, stream: object = None,
) -> TableLayout:
    """The layout of an importer's arguments, with every problem reported at once.

    :raises ValueError: naming the construct path, for a token or invalid prefix, period, key or time unit, an
        ``encryption_key`` that is not a ``kms.IKey`` or a ``stream`` that is not a ``StreamViewType``.
    """
    problems = Problems(scope, construct_id)
    check_key(problems, "encryption_key", encryption_key)
    problems.check(
        stream is None or isinstance(stream, dynamodb.StreamViewType),
        f"stream {stream!r} is not a dynamodb.StreamViewType: pass the owning rotation's stream, e.g. "
        "dynamodb.StreamViewType.NEW_AND_OLD_IMAGES",
    )
    layout = None
    if literal_prefix(problems, table_prefix):
        layout = problems.collect(lambda: table_layout(table_prefix, layout_options))
    problems.raise_if_any()
    return layout
