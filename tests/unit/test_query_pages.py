"""query_all follows every page, but never forever: a page limit and a repeated cursor are clear errors."""

from __future__ import annotations

import pytest

from cdk_ts_runtime._items import PageLimitError, query_all


class Pages:
    """A DynamoDB client's ``query`` that serves the given pages in order (a fake, not a mock)."""

    def __init__(self, pages):
        self.pages = list(pages)
        self.calls = []

    def query(self, **request):
        self.calls.append(request)
        return self.pages.pop(0)


def page(n, cursor=None):
    body = {"Items": [{"pk": {"N": str(n)}}]}
    if cursor is not None:
        body["LastEvaluatedKey"] = {"pk": {"N": str(cursor)}}
    return body


def test_every_page_is_followed_up_to_the_last():
    client = Pages([page(1, 1), page(2, 2), page(3)])
    assert [i["pk"] for i in query_all(client, {"TableName": "t"})] == [1, 2, 3]
    assert [c.get("ExclusiveStartKey") for c in client.calls] == [None, {"pk": {"N": "1"}}, {"pk": {"N": "2"}}]


def test_more_pages_than_the_limit_is_an_error_naming_table_and_limit():
    client = Pages([page(1, 1), page(2, 2), page(3)])
    with pytest.raises(PageLimitError, match=r"Query on t still had pages after max_pages=2 \(2 items\)"):
        query_all(client, {"TableName": "t"}, max_pages=2)


def test_a_cursor_that_does_not_move_is_an_error_not_a_loop():
    client = Pages([page(1, 1), page(1, 1), page(1, 1)])
    with pytest.raises(PageLimitError, match="returned the same LastEvaluatedKey twice"):
        query_all(client, {"TableName": "t"})
    assert len(client.calls) == 2
