"""CloudWatch's side of a dashboard custom widget: the event it sends, and GetInsightRuleReport answers on the wire.

moto has no ``GetInsightRuleReport``, so a report goes in as bytes and the client's own botocore parses it: a
``before-send`` handler answers the request (botocore's documented way to short-circuit sending), as
``tests/support/wire.py`` does for DynamoDB. Sources:

- The event: the CloudWatch user guide, "Details about custom widgets in CloudWatch"
  (add_custom_widget_dashboard_about), whose ``widgetContext`` example is :data:`DOCUMENTED_EVENT`, verbatim.
- The report: the AWS CLI's example for ``aws cloudwatch get-insight-rule-report`` (AWS CLI Command Reference,
  also in the AWS code library's "CloudWatch examples using AWS CLI"), :data:`DOCUMENTED_REPORT`, verbatim. Its
  members are the ``GetInsightRuleReportOutput`` shape's in botocore's CloudWatch model, whose first protocol is
  ``json`` (JSON 1.0), the form this body has; :func:`report_body` writes other reports in the same form.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from tests.support.wire import nowhere_client, response

DOCUMENTED_EVENT = """{
    "widgetContext": {
        "dashboardName": "Name-of-current-dashboard",
        "widgetId": "widget-16",
        "accountId": "012345678901",
        "locale": "en",
        "timezone": {
            "label": "UTC",
            "offsetISO": "+00:00",
            "offsetInMinutes": 0
        },
        "period": 300,
        "isAutoPeriod": true,
        "timeRange": {
            "mode": "relative",
            "start": 1627236199729,
            "end": 1627322599729,
            "relativeStart": 86400012,
            "zoom": {
                "start": 1627276030434,
                "end": 1627282956521
             }
        },
        "theme": "light",
        "linkCharts": true,
        "title": "Tweets for Amazon website problem",
        "forms": {
            "all": {}
        },
        "params": {
            "original": "param-to-widget"
        },
        "width": 588,
        "height": 369
    }
}"""

DOCUMENTED_REPORT = b"""{
    "KeyLabels": [
        "PartitionKey"
    ],
    "AggregationStatistic": "Sum",
    "AggregateValue": 0.5,
    "ApproximateUniqueCount": 1,
    "Contributors": [
        {
            "Keys": [
                "RequestID"
            ],
            "ApproximateAggregateValue": 0.5,
            "Datapoints": [
                {
                    "Timestamp": "2024-10-13T21:00:00+00:00",
                    "ApproximateValue": 0.5
                }
            ]
        }
    ],
    "RuleAttributes": []
}"""


def widget_event(start_ms: int, end_ms: int, *, period: int = 300, **params) -> dict:
    """The documented event with another range (no zoom) and period, and ``params`` as the widget's parameters."""
    event = json.loads(DOCUMENTED_EVENT)
    context = event["widgetContext"]
    context["timeRange"] = {"mode": "absolute", "start": start_ms, "end": end_ms}
    context["period"] = period
    context["params"] = params
    return {**params, **event}


def report_body(contributors: list[tuple[str, float]], *, unique: int | None = None) -> bytes:
    """A report in :data:`DOCUMENTED_REPORT`'s form naming ``contributors`` (key, throttled requests)."""
    body = json.loads(DOCUMENTED_REPORT)
    body["AggregateValue"] = sum(value for _key, value in contributors)
    body["ApproximateUniqueCount"] = len(contributors) if unique is None else unique
    body["Contributors"] = [
        {"Keys": [key], "ApproximateAggregateValue": value,
         "Datapoints": [{"Timestamp": "2024-10-13T21:00:00+00:00", "ApproximateValue": value}]}
        for key, value in contributors
    ]
    return json.dumps(body).encode()


def cloudwatch_client():
    """A CloudWatch client whose requests go nowhere (127.0.0.1:9), one attempt each: answer them with
    :func:`answer_reports`; an unanswered one fails to connect, as from a VPC with no CloudWatch endpoint."""
    client = nowhere_client("cloudwatch")
    assert client.meta.service_model.resolved_protocol == "json", "these bodies are CloudWatch's JSON protocol"
    return client


def answer_reports(client, answer_for: Callable[[dict], bytes | None]) -> list[dict]:
    """Answer ``client``'s GetInsightRuleReport with ``answer_for(request JSON)`` (None: send it on).

    Returns the list the requests it saw are appended to, as sent (JSON).
    """
    seen: list[dict] = []

    def before_send(request, **_kwargs):
        asked = json.loads(request.body or b"{}")
        seen.append(asked)
        body = answer_for(asked)
        return None if body is None else response(body, status=200)

    client.meta.events.register_first("before-send.cloudwatch.GetInsightRuleReport", before_send)
    return seen
