"""The dashboard custom widget that names the top throttled keys of a rotation's current and previous tables.

DynamoDB's side goes through the rules proxy (moto has no Contributor Insights API; the proxy keeps each table's
insights and names its rules as DynamoDB does); CloudWatch's GetInsightRuleReport, which moto lacks too, is answered
on the wire with the AWS CLI's documented report (``tests/support/custom_widget.py``), parsed by botocore.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from html import escape

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts_runtime import TableLayout, table_name
from cdk_ts_runtime._throttled_keys_report import PeriodThrottledKeys
from cdk_ts_runtime._throttled_keys_widget import DOCUMENTATION, ThrottledKeysWidget
from cdk_ts_runtime.handlers import throttled_keys_widget as widget_handler
from tests.support.custom_widget import (
    DOCUMENTED_EVENT,
    DOCUMENTED_REPORT,
    answer_reports,
    cloudwatch_client,
    report_body,
    widget_event,
)
from tests.support.examples import examples
from tests.support.rules_tables import create_active
from tests.support.times import ms

TODAY = datetime(2026, 3, 10, tzinfo=UTC)
YESTERDAY = datetime(2026, 3, 9, tzinfo=UTC)
#: The viewed range: the first three hours of TODAY.
START, END = TODAY, datetime(2026, 3, 10, 3, tzinfo=UTC)


@pytest.fixture
def ddb(rules_proxy):
    return rules_proxy.client()


@pytest.fixture
def cloudwatch():
    return cloudwatch_client()


def period_table(proxy, ddb, prefix: str, when: datetime, *, mode: str | None = "THROTTLED_KEYS") -> tuple[str, str]:
    """A daily period table of ``prefix`` with insights in ``mode`` (None: off), and its PKT rule ("" if none)."""
    name = create_active(proxy, ddb, table_name(prefix, "daily", when))
    if mode is None:
        return name, ""
    ddb.update_contributor_insights(TableName=name, ContributorInsightsAction="ENABLE", ContributorInsightsMode=mode)
    rules = ddb.describe_contributor_insights(TableName=name)["ContributorInsightsRuleList"]
    return name, next(rule for rule in rules if "-PKT-" in rule)


#: Epoch milliseconds as any caller may send them: around now, far past, far future, beyond any datetime.
_EPOCH_MS = st.integers(min_value=-(10**17), max_value=10**17) | st.sampled_from([ms(START), ms(END), 253402300800000])


def _table_year(epoch_ms: int) -> bool:
    """Whether a period table can be named for ``epoch_ms`` (years 1000-9999)."""
    return -30610224000000 <= epoch_ms < 253402300800000


def widget(prefix: str, ddb, cloudwatch) -> ThrottledKeysWidget:
    reports = PeriodThrottledKeys(TableLayout(table_prefix=prefix), dynamodb=ddb, cloudwatch=cloudwatch)
    return ThrottledKeysWidget(reports)


def rows(html: str) -> list[list[str]]:
    """The widget's table rows (header rows excepted), as cell texts."""
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr><td>.*?</tr>", html)]


class TestReports:
    def test_each_tables_rule_is_asked_for_the_viewed_range_and_its_keys_shown(self, rules_proxy, ddb, cloudwatch,
                                                                               unique_name):
        today, today_rule = period_table(rules_proxy, ddb, unique_name, TODAY)
        yesterday, yesterday_rule = period_table(rules_proxy, ddb, unique_name, YESTERDAY)
        asked = answer_reports(cloudwatch, lambda _request: DOCUMENTED_REPORT)

        html = widget(unique_name, ddb, cloudwatch).answer(widget_event(ms(START), ms(END), period=60))

        assert [(a["RuleName"], a["StartTime"], a["EndTime"], a["Period"], a["MaxContributorCount"], a["OrderBy"])
                for a in asked] == [
            (today_rule, START.timestamp(), END.timestamp(), 60, 10, "Sum"),
            (yesterday_rule, START.timestamp(), END.timestamp(), 60, 10, "Sum"),
        ]
        assert html.index(f"<h3>{today}</h3>") < html.index(f"<h3>{yesterday}</h3>")
        assert rows(html) == [["RequestID", "0", "100%"], ["RequestID", "0", "100%"]]
        assert "<th>PartitionKey</th>" in html

    def test_the_documented_events_zoomed_range_is_the_one_reported(self, rules_proxy, ddb, cloudwatch, unique_name):
        event = json.loads(DOCUMENTED_EVENT)
        zoom = event["widgetContext"]["timeRange"]["zoom"]  # 2021-07-26 05:07 to 06:02 UTC
        _name, rule = period_table(rules_proxy, ddb, unique_name, datetime(2021, 7, 26, tzinfo=UTC))
        asked = answer_reports(cloudwatch, lambda _request: DOCUMENTED_REPORT)

        widget(unique_name, ddb, cloudwatch).answer(event)

        assert [(a["RuleName"], a["StartTime"] * 1000, a["EndTime"] * 1000) for a in asked] == [
            (rule, zoom["start"], zoom["end"])
        ]

    def test_keys_are_ranked_by_throttles_with_their_share_and_the_widgets_top(self, rules_proxy, ddb, cloudwatch,
                                                                               unique_name):
        period_table(rules_proxy, ddb, unique_name, TODAY)
        body = report_body([("sensor-7", 20.0), ("sensor-1", 900.0), ("sensor-3", 80.0)], unique=41)
        asked = answer_reports(cloudwatch, lambda _request: body)

        html = widget(unique_name, ddb, cloudwatch).answer(widget_event(ms(START), ms(END), top=3))

        assert [a["MaxContributorCount"] for a in asked] == [3]
        assert rows(html) == [["sensor-1", "900", "90%"], ["sensor-3", "80", "8%"], ["sensor-7", "20", "2%"]]
        assert "1,000 throttled requests over about 41 keys" in html

    def test_a_key_is_shown_as_text_never_as_markup(self, rules_proxy, ddb, cloudwatch, unique_name):
        period_table(rules_proxy, ddb, unique_name, TODAY)
        answer_reports(cloudwatch, lambda _request: report_body([('<img src=x onerror="alert(1)">', 5.0)]))

        html = widget(unique_name, ddb, cloudwatch).answer(widget_event(ms(START), ms(END)))

        assert "<img" not in html
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html

    def test_a_missing_table_and_one_without_insights_say_so_and_ask_cloudwatch_nothing(self, rules_proxy, ddb,
                                                                                         cloudwatch, unique_name):
        period_table(rules_proxy, ddb, unique_name, TODAY, mode=None)  # yesterday's table was never created
        asked = answer_reports(cloudwatch, lambda _request: DOCUMENTED_REPORT)

        html = widget(unique_name, ddb, cloudwatch).answer(widget_event(ms(START), ms(END)))

        assert asked == []
        assert "Contributor Insights is DISABLED on this table" in html
        assert "no such table (not created yet, or expired)" in html

    def test_a_table_in_accessed_keys_mode_reports_its_throttled_keys_rule(self, rules_proxy, ddb, cloudwatch,
                                                                           unique_name):
        _name, rule = period_table(rules_proxy, ddb, unique_name, TODAY, mode="ACCESSED_AND_THROTTLED_KEYS")
        asked = answer_reports(cloudwatch, lambda _request: DOCUMENTED_REPORT)

        widget(unique_name, ddb, cloudwatch).answer(widget_event(ms(START), ms(END)))

        assert [a["RuleName"] for a in asked] == [rule]
        assert "-PKT-" in rule

    def test_cloudwatch_out_of_reach_is_named_per_table(self, rules_proxy, ddb, cloudwatch, unique_name):
        period_table(rules_proxy, ddb, unique_name, TODAY)
        period_table(rules_proxy, ddb, unique_name, YESTERDAY)

        html = widget(unique_name, ddb, cloudwatch).answer(widget_event(ms(START), ms(END)))

        assert html.count("GetInsightRuleReport failed: EndpointConnectionError") == 2
        assert rows(html) == []

    def test_weekly_tables_are_this_iso_week_and_the_one_before(self, ddb, cloudwatch):
        reports = PeriodThrottledKeys(TableLayout(table_prefix="readings", period="weekly"),
                                      dynamodb=ddb, cloudwatch=cloudwatch)
        assert reports.tables(datetime(2026, 1, 1, 12, tzinfo=UTC)) == ["readings_2026-W01", "readings_2025-W52"]


class TestRequests:
    def test_describe_answers_the_documentation_whose_yaml_block_gives_the_parameters(self, ddb, cloudwatch):
        answer = widget("readings", ddb, cloudwatch).answer({"describe": True})
        assert answer == DOCUMENTATION
        assert re.search(r"``` yaml\n(.*?)\n```", answer, re.S).group(1) == "top: 10"

    @pytest.mark.parametrize("top", [0, 101, "5", True])
    def test_a_bad_top_is_shown_naming_the_parameter(self, ddb, cloudwatch, top):
        asked = answer_reports(cloudwatch, lambda _request: DOCUMENTED_REPORT)
        html = widget("readings", ddb, cloudwatch).answer(widget_event(ms(START), ms(END), top=top))
        expected = f"top {top!r} must be a whole number from 1 to 100 (GetInsightRuleReport's MaxContributorCount)"
        assert html == f"<p>{escape(expected)}</p>"
        assert asked == []

    @settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(start=_EPOCH_MS, end=_EPOCH_MS)
    def test_any_time_range_is_answered_and_one_no_table_is_named_for_is_refused_by_name(
        self, ddb, cloudwatch, start, end
    ):
        # the range's ends come from whoever invokes the function: far-future, negative or huge numbers included
        asked = answer_reports(cloudwatch, lambda _request: DOCUMENTED_REPORT)
        html = widget("readings", ddb, cloudwatch).answer(widget_event(start, end))
        years_ok = all(_table_year(v) for v in (start, end))
        if not years_ok:
            assert html.startswith("<p>timeRange ") and "outside the years 1000-9999" in html
            assert asked == []
        elif end <= start:
            assert "before it starts" in html
        else:
            assert html.startswith("<p>Partition keys DynamoDB throttled most")

    def test_an_event_that_is_not_a_widgets_says_where_to_invoke_it_from(self, ddb, cloudwatch):
        html = widget("readings", ddb, cloudwatch).answer({"top": 5})
        assert "invoke this function from a CloudWatch dashboard custom widget" in html


class TestHandler:
    def test_the_handler_reads_the_layout_from_its_environment(self, rules_proxy, unique_name, monkeypatch):
        monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", rules_proxy.endpoint_url)
        monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", "http://127.0.0.1:9")
        for variable, value in TableLayout(table_prefix=unique_name).to_env().items():
            monkeypatch.setenv(variable, value)

        html = widget_handler.handler(widget_event(ms(START), ms(END)), None)

        assert f"<h3>{unique_name}_2026-03-10</h3>" in html
        assert html.count("no such table") == 2
        assert widget_handler.handler({"describe": True}, None) == DOCUMENTATION
