"""Entry point of the dashboard custom widget that names a rotation's top throttled keys.

Parses nothing itself: :class:`cdk_ts_runtime._throttled_keys_widget.ThrottledKeysWidget` reads the CloudWatch event
and answers HTML (or its documentation for ``describe``). The rotation's layout is in the environment
(``TableLayout.to_env``), so the widget's parameters cannot point the function at other tables.
"""

from __future__ import annotations

import os
from typing import Any

import boto3

from cdk_ts_runtime._retries import METRICS
from cdk_ts_runtime._throttled_keys_report import PeriodThrottledKeys
from cdk_ts_runtime._throttled_keys_widget import ThrottledKeysWidget

__all__ = ["handler"]  # the entry point; the rest of this module is its machinery


def handler(event: dict[str, Any], context: object) -> str:
    """Answer one custom widget invocation, with clients made now (at call time).

    Both clients use ``_retries.METRICS`` (short timeouts, 2 attempts): a viewer waits on the answer, and a
    table whose report cannot be read is shown with the reason rather than holding up the other.
    """
    reports = PeriodThrottledKeys.from_env(
        os.environ,
        dynamodb=boto3.client("dynamodb", config=METRICS),
        cloudwatch=boto3.client("cloudwatch", config=METRICS),
    )
    return ThrottledKeysWidget(reports).answer(event)
