"""What ``StreamArchiver.from_archive_bucket_name`` returns: an archive another stack, app or account writes."""

from __future__ import annotations

from typing import TypedDict

from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from cdk_ts._import_checks import check_account, check_bucket_name, check_name_not_arn
from cdk_ts._validation import Problems, check_iam_text, refuses_unknown_keywords
from cdk_ts.archive._glue_names import MAX_NAME_LENGTH, VIEW_SUFFIX, glue_name
from cdk_ts.archive.base import StreamArchiverBase


class ArchiveAttributes(TypedDict, total=False):
    """The optional keywords of ``StreamArchiver.from_archive_bucket_name``, the owner's values, as a typed dict.

    The importer and ``ImportedStreamArchiver`` take each as a keyword-only parameter, documented with its
    default on ``ImportedStreamArchiver``. This dict type is for values handed from the owner to its readers:
    ``attributes: ArchiveAttributes = {"prefix": "cdc/"}``, then ``**attributes`` in the call.
    """

    prefix: str
    failure_bucket_name: str | None
    glue_database_name: str | None
    glue_table_name: str | None
    function_name: str | None
    failure_metrics_filter_id: str | None
    account: str | None


class ImportedStreamArchiver(StreamArchiverBase):
    """An archive another stack, app or account writes: what ``StreamArchiver.from_archive_bucket_name`` returns.

    Creates no resource: the buckets and the function are imported by name, so grants, ``bind`` and
    metrics name the owner's resources. In another account the owner's bucket policies must also allow
    the grantee (an identity policy alone does not cross accounts).

    Keyword arguments of the constructor (and of ``StreamArchiver.from_archive_bucket_name``), the owning
    ``StreamArchiver``'s values:

    :param archive_bucket_name: the archive bucket's name (the owner's ``bucket.bucket_name``). Required.
    :param prefix: the archive's key prefix (the owner's ``prefix``; ends with ``/``, or empty).
        Default: ``"dynamodb/"``.
    :param failure_bucket_name: the S3 failure destination (the owner's ``failure_bucket.bucket_name``), so
        ``grant_write_data`` and ``bind`` cover a replay. Default: None — grants cover the archive only.
    :param glue_database_name: the database of the archive's Glue table (the owner's ``glue_database_name``;
        with ``glue_table_name``). Default: None — ``grant_catalog_read`` refuses.
    :param glue_table_name: the archive's Glue table (the owner's ``glue_table_name``; its view adds
        ``_deduplicated``). Default: None.
    :param function_name: the archiver function's name (the owner's ``function.function_name``), for the
        ``metric_*`` methods, the dashboard row and ``function``. Default: None — the metrics refuse, naming it.
    :param failure_metrics_filter_id: the owner's ``failure_metrics_filter_id``, for ``metric_dead_letters``.
        Default: None.
    :param account: the owner's account, whose Glue catalog ``grant_catalog_read`` names (the grantee's
        Athena reads it as a registered cross-account catalog). Default: None — this stack's account.
    :raises ValueError: naming the path and every problem at once (an unknown keyword, with the closest
        valid one; a prefix without ``/`` or with ``*``/``?``, a bucket name S3 refuses or an ARN, an account
        that is not 12 digits, a function ARN where its name is asked, one Glue name without the other, a
        name Glue refuses, a filter ID without a failure bucket).
    """

    @refuses_unknown_keywords
    def __init__(
        self, scope: Construct, construct_id: str, *,
        archive_bucket_name: str,
        prefix: str = "dynamodb/",
        failure_bucket_name: str | None = None,
        glue_database_name: str | None = None,
        glue_table_name: str | None = None,
        function_name: str | None = None,
        failure_metrics_filter_id: str | None = None,
        account: str | None = None,
    ) -> None:
        """Describe the owner's archive by the owning ``StreamArchiver``'s values (keywords: see the class)."""
        problems = Problems(scope, construct_id)
        problems.check(not prefix or prefix.endswith("/"), f"prefix {prefix!r} must end with '/' (or be empty)")
        check_iam_text(problems, "prefix", prefix)
        check_bucket_name(problems, "archive_bucket_name", archive_bucket_name)
        check_bucket_name(problems, "failure_bucket_name", failure_bucket_name)
        check_account(problems, "account", account)
        check_name_not_arn(problems, "function_name", function_name, what="Lambda function")
        check_iam_text(problems, "function_name", function_name)
        database, table = _glue_names(problems, glue_database_name, glue_table_name)
        problems.check(
            failure_metrics_filter_id is None or failure_bucket_name is not None,
            "failure_metrics_filter_id names a filter of the failure bucket: pass failure_bucket_name too",
        )
        problems.raise_if_any()
        super().__init__(scope, construct_id)
        self.bucket = s3.Bucket.from_bucket_name(self, "Bucket", archive_bucket_name)
        self.prefix = prefix
        self.failure_bucket = (
            s3.Bucket.from_bucket_name(self, "FailureBucket", failure_bucket_name) if failure_bucket_name else None
        )
        self.dead_letter_queue = None
        self.function = lambda_.Function.from_function_name(self, "Function", function_name) if function_name else None
        self.glue_database_name, self.glue_table_name = database, table
        self._failure_metrics_filter_id = failure_metrics_filter_id
        self._catalog_account = account
        self._given_function_name = function_name

    @property
    def failure_metrics_filter_id(self) -> str | None:
        """The owner's failure-bucket request-metrics filter ID, when given to the importer."""
        return self._failure_metrics_filter_id

    def _function_name(self) -> str | None:
        return self._given_function_name  # a literal, where the imported function's name is parsed from its ARN


def _glue_names(problems: Problems, database: str | None, table: str | None) -> tuple[str | None, str | None]:
    """The imported catalog's names as Glue stores them, recording a name Glue refuses or one given alone."""
    if database is None and table is None:
        return None, None
    problems.check(
        database is not None and table is not None,
        "glue_database_name and glue_table_name go together: pass the owning archiver's glue_database_name "
        "and glue_table_name",
    )
    longest = MAX_NAME_LENGTH - len(VIEW_SUFFIX)
    stored_database = database and glue_name(problems, "glue_database_name", database)
    stored_table = table and glue_name(problems, "glue_table_name", table, longest=longest)
    return stored_database or None, stored_table or None
