"""A CloudWatch dashboard custom widget naming the top throttled keys of a rotation's current and previous tables.

The contract is CloudWatch's (user guide, "Details about custom widgets in CloudWatch"): the dashboard invokes the
function with the widget's parameters as the event's own keys and a ``widgetContext`` (``timeRange`` with ``start``
and ``end`` in epoch milliseconds and, once the viewer zooms, ``zoom``; ``period`` in seconds; ``params``, the
widget's parameters again); the function returns HTML, which the dashboard shows with its JavaScript removed. An
event with ``describe`` asks for the widget's documentation, in Markdown, whose first ``yaml`` block fills in the
parameters when the widget is added in the console.

Parameters: ``top``, how many keys to name per table (1-100; default 10).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any

from cdk_ts_runtime._errors import ValidationError
from cdk_ts_runtime._inputs import MAX_YEAR, MIN_YEAR, table_time
from cdk_ts_runtime._throttled_keys_report import (
    DEFAULT_CONTRIBUTORS,
    PeriodThrottledKeys,
    TableThrottledKeys,
    check_top,
)

#: What the widget answers to ``describe``: its documentation, with its parameters in the first yaml block.
DOCUMENTATION = f"""## Top throttled keys of the current and previous period tables (cdk-ts)

Names the partition keys DynamoDB throttled most in the dashboard's time range, for the period table holding the
range's end and the one before it, from each table's Contributor Insights rule (`THROTTLED_KEYS` mode).
One key far above the others is a hot key: spread it over shards (`ShardedTable`). Many keys throttled together
is the table's capacity.

``` yaml
top: {DEFAULT_CONTRIBUTORS}
```

`top`: how many keys to name per table, 1 to 100.
"""


@dataclass(frozen=True)
class WidgetRequest:
    """What one custom widget invocation asks for: the viewed range (the zoomed one if any), its period and ``top``."""

    start: datetime
    end: datetime
    period_seconds: int
    top: int = DEFAULT_CONTRIBUTORS

    @classmethod
    def from_event(cls, event: Mapping[str, Any]) -> WidgetRequest:
        """Read a custom widget event (the CloudWatch user guide's ``widgetContext``).

        :raises ValidationError: for an event without ``widgetContext.timeRange``, or a bad ``top``.
        """
        context = event.get("widgetContext") or {}
        time_range = context.get("timeRange") or {}
        shown = time_range.get("zoom") or time_range
        period = context.get("period")
        numbers = (shown.get("start"), shown.get("end"), period)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in numbers):
            raise ValidationError(
                "the event has no widgetContext with timeRange start and end (epoch milliseconds) and period "
                "(seconds): invoke this function from a CloudWatch dashboard custom widget"
            )
        params = {**(context.get("params") or {}), **{k: v for k, v in event.items() if k != "widgetContext"}}
        return cls(
            start=_from_ms("timeRange start", shown["start"]),
            end=_from_ms("timeRange end", shown["end"]),
            period_seconds=period,
            top=check_top(params.get("top", DEFAULT_CONTRIBUTORS)),
        )


class ThrottledKeysWidget:
    """Answers custom widget invocations with the HTML of :class:`PeriodThrottledKeys` reports.

    :param reports: the reader of the rotation's tables.
    """

    def __init__(self, reports: PeriodThrottledKeys) -> None:
        """Keep the reader."""
        self.reports = reports

    def answer(self, event: Mapping[str, Any]) -> str:
        """The widget's content for ``event``: its documentation for ``describe``, else the reports as HTML.

        A request it cannot read is answered with the reason as the widget's text, so the viewer sees it.
        """
        if event.get("describe"):
            return DOCUMENTATION
        try:
            request = WidgetRequest.from_event(event)
            reports = self.reports.report(
                request.start, request.end, period_seconds=request.period_seconds, top=request.top
            )
        except ValidationError as error:
            return f"<p>{escape(str(error))}</p>"
        return render(request, reports, partition_key=self.reports.layout.partition_key)


def render(request: WidgetRequest, reports: list[TableThrottledKeys], *, partition_key: str) -> str:
    """The widget's HTML: a paragraph saying what is shown, then each table's keys (every value escaped)."""
    span = f"{request.start:%Y-%m-%d %H:%M} to {request.end:%Y-%m-%d %H:%M} UTC"
    parts = [
        f"<p>Partition keys DynamoDB throttled most from {span}. One key far above the others is a hot key: shard "
        "it. Many keys throttled together is the table's capacity.</p>"
    ]
    for report in reports:
        parts.append(f"<h3>{escape(report.table)}</h3>")
        if report.problem is not None:
            parts.append(f"<p>{escape(report.problem)}</p>")
        elif not report.keys:
            parts.append("<p>No throttled key in this time range.</p>")
        else:
            parts.append(_key_table(report, partition_key))
    return "\n".join(parts)


def _key_table(report: TableThrottledKeys, partition_key: str) -> str:
    header = " / ".join(report.key_labels) or partition_key
    rows = []
    for key in report.keys:
        share = key.throttled_requests / report.throttled_requests if report.throttled_requests else 0.0
        rows.append(
            f"<tr><td>{escape(' / '.join(key.keys))}</td><td>{key.throttled_requests:,.0f}</td>"
            f"<td>{share:.0%}</td></tr>"
        )
    return (
        f"<table><tr><th>{escape(header)}</th><th>Throttled requests</th><th>Share</th></tr>{''.join(rows)}</table>"
        f"<p>{report.throttled_requests:,.0f} throttled requests over about {report.keys_throttled:,} keys "
        f"(rule {escape(report.rule or '')}).</p>"
    )


def _from_ms(name: str, value: int) -> datetime:
    """``value`` epoch milliseconds as a UTC time a period table can be named for (years 1000-9999)."""
    try:
        when = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=value)
    except OverflowError:  # beyond datetime's years 1-9999: no table is named for it either
        raise ValidationError(
            f"{name} {value} (epoch milliseconds) is outside the years {MIN_YEAR}-{MAX_YEAR} that period tables "
            "are named for"
        ) from None
    return table_time(f"{name} {value} (epoch milliseconds)", when)
