"""ImportedPeriodTables: period tables another stack or app rotates, for grants, ``bind`` and metrics."""

from __future__ import annotations

from typing import Unpack

from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from constructs import Construct

from cdk_ts._validation import Problems, check_keywords, keyword_names
from cdk_ts.rotation.base import LAYOUT_KEYWORDS, PeriodTableOptions, PeriodTablesBase, literal_prefix, table_layout


class ImportedPeriodTables(PeriodTablesBase):
    """Period tables another stack or app rotates: what ``RotatingTimeSeriesTables.from_table_prefix`` returns.

    Creates nothing. It grants on the same ``?`` patterns as the owning construct (``{prefix}_????-??-??``
    for daily), in the account and Region of ``scope``'s stack; ``bind`` sets the same environment for
    ``PeriodRouter.from_env``; its ``metric_*`` methods and ``dashboard_widgets`` name the same tables and
    the metrics the owner's rotation function publishes.
    """

    def __init__(
        self, scope: Construct, construct_id: str, *,
        table_prefix: str,
        stream: dynamodb.StreamViewType | None = None,
        encryption_key: kms.IKey | None = None,
        **layout_options: Unpack[PeriodTableOptions],
    ) -> None:
        """Describe the owner's tables by the values the owning ``RotatingTimeSeriesTables`` was given.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param table_prefix: the owning rotation's ``table_prefix`` (a literal string).
        :param stream: the owning rotation's ``stream``.
            Default: None — no stream; ``grant_stream_read`` refuses.
        :param encryption_key: the owning rotation's ``encryption_key``, so grants include its KMS actions.
            Default: None — the tables use an AWS owned key.
        :param layout_options: the owning rotation's keywords of ``PeriodTableOptions``, documented there
            (``period``, ``partition_key``, ``sort_key``, ``time_unit``).
        :raises ValueError: naming the construct path, for an unknown keyword (with the closest valid one), a
            token or invalid prefix, period, key or time unit.
        """
        problems = Problems(scope, construct_id)
        check_keywords(
            problems, layout_options, LAYOUT_KEYWORDS, also_valid=keyword_names(ImportedPeriodTables.__init__)
        )
        layout = None
        if literal_prefix(problems, table_prefix):
            layout = problems.collect(lambda: table_layout(table_prefix, layout_options))
        problems.raise_if_any()
        super().__init__(scope, construct_id, layout, stream_view_type=stream, encryption_key=encryption_key)
