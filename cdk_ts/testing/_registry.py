"""The rules the proxy applies, by name: what each does, DynamoDB's answer, the public source, and whether a guess.

A rule is *documented* when a public source gives both the behaviour and the limit it enforces; it is a *guess*
when DynamoDB documents the behaviour but not the number the harness needs (how long, how many), or the answer's
details (which throttling reason). ``local_dynamodb(guesses=False)`` (the default) applies the documented rules
only; ``guesses=True`` applies the guesses too. Any rule can be switched off by name (``disabled_rules``).
docs/testing.md's table is generated from ``RULES`` (tests/docs/test_testing_doc.py keeps the two equal).
"""

from __future__ import annotations

from dataclasses import dataclass

from cdk_ts_runtime._errors import ValidationError

_API = "https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/"
_GUIDE = "https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"


@dataclass(frozen=True)
class Rule:
    """One rule of the proxy: its ``name`` (for ``disabled_rules``), what it refuses, DynamoDB's answer, the source.

    :param guess: True when a number or detail of the rule comes from no public source (the setting that holds
        it is named in ``does``). Default: False -- documented.
    """

    name: str
    does: str
    answer: str
    source: str
    guess: bool = False


RULES: tuple[Rule, ...] = (
    # -- control plane -------------------------------------------------------------------------------------------
    Rule("resource_in_use",
         "UpdateTable or DeleteTable on a table that is CREATING, UPDATING or DELETING is refused "
         "(windows: create_seconds, update_seconds, delete_seconds)",
         "ResourceInUseException", _API + "API_UpdateTable.html"),
    Rule("tables_in_transition_limit",
         "More tables in CREATING/UPDATING/DELETING at once than control_plane_limit (500) are refused",
         "LimitExceededException", _GUIDE + "ServiceQuotas.html"),
    Rule("indexed_creates_limit",
         "More CreateTables with secondary indexes in flight than control_plane_limit_with_indexes (250)",
         "LimitExceededException", _API + "API_CreateTable.html"),
    Rule("no_data_while_creating",
         "Reads and writes on a CREATING table are refused",
         "ResourceNotFoundException", _API + "API_CreateTable.html"),
    Rule("table_class_alone",
         "A TableClass change must be the only change in its UpdateTable",
         "ValidationException", "https://github.com/hashicorp/terraform-provider-aws/issues/28497"),
    Rule("billing_and_throughput_agree",
         "ProvisionedThroughput with PAY_PER_REQUEST, or PROVISIONED without it, is refused",
         "ValidationException", _API + "API_UpdateTable.html"),
    Rule("no_op_update",
         "An UpdateTable with equal provisioned throughput, or with nothing in it, is refused",
         "ValidationException", "https://github.com/cortexproject/cortex/issues/441"),
    Rule("one_index_change",
         "At most one global secondary index created or deleted per UpdateTable",
         "LimitExceededException", "https://github.com/taoensso/faraday/issues/80"),
    Rule("index_change_alone",
         "Creating or deleting an index and changing the table's provisioned throughput in one call is refused",
         "ValidationException", _API + "API_UpdateTable.html"),
    Rule("warm_throughput_only_rises",
         "Warm throughput lower than the table's current one is refused",
         "ValidationException", _GUIDE + "warm-throughput.html"),
    Rule("capacity_decreases_per_day",
         "Provisioned capacity decreases: 4 at any time in a UTC day, then one an hour, 27 a day",
         "LimitExceededException", _GUIDE + "ServiceQuotas.html"),
    Rule("on_demand_switches_per_day",
         "Provisioned to on-demand: 4 switches in a rolling 24 hours",
         "LimitExceededException", _GUIDE + "switching.capacitymode.html"),
    Rule("table_class_changes_per_30_days",
         "Table class: 2 changes in a trailing 30 days",
         "LimitExceededException", _GUIDE + "WorkingWithTables.tableclasses.html"),
    Rule("deletion_protection",
         "DeleteTable on a table with deletion protection is refused",
         "ValidationException", _API + "API_DeleteTable.html"),
    # -- what settles after a moment -----------------------------------------------------------------------------
    Rule("backups_after_create",
         "UpdateContinuousBackups is refused for backups_unavailable_seconds (5) after a new table turns ACTIVE",
         "ContinuousBackupsUnavailableException", _API + "API_UpdateContinuousBackups.html", guess=True),
    Rule("tag_lag",
         "ListTagsOfResource shows the previous tag set for tag_lag_seconds (5) after a change",
         "the previous (or an empty) tag set", _API + "API_TagResource.html", guess=True),
    Rule("ttl_once_an_hour",
         "One UpdateTimeToLive per table an hour (ttl_update_interval_seconds)",
         "ValidationException", _API + "API_UpdateTimeToLive.html"),
    Rule("ttl_already_set",
         "An UpdateTimeToLive that repeats the setting in force is refused",
         "ValidationException", "https://github.com/cloudposse/terraform-aws-dynamodb/issues/94"),
    Rule("ttl_settling",
         "DescribeTimeToLive says ENABLING/DISABLING for ttl_settle_seconds (60) after a change",
         "TimeToLiveStatus ENABLING or DISABLING", _API + "API_UpdateTimeToLive.html", guess=True),
    # -- data plane -------------------------------------------------------------------------------------------
    Rule("item_size",
         "An item over 400 KB (409,600 bytes of names and values) in PutItem or BatchWriteItem is refused before "
         "the table, its state or its throughput is looked at",
         "ValidationException: Item size has exceeded the maximum allowed size", _GUIDE + "ServiceQuotas.html"),
    Rule("partition_throughput",
         "Each partition (of a table or a global secondary index) serves write_units_per_second (1,000) and "
         "read_units_per_second (3,000); a hot key is throttled",
         "ThrottlingException (on-demand, throttlingReasons) or ProvisionedThroughputExceededException "
         "(provisioned, ThrottlingReasons): Table|Index + Read|Write + KeyRangeThroughputExceeded",
         _GUIDE + "bp-partition-key-design.html"),
    Rule("provisioned_capacity",
         "A provisioned table or index serves its capacity, with burst_seconds (300) of unused capacity kept",
         "ProvisionedThroughputExceededException: ...ProvisionedThroughputExceeded",
         _GUIDE + "burst-adaptive-capacity.html"),
    Rule("on_demand_maximum",
         "An on-demand table's OnDemandThroughput maximum",
         "ThrottlingException: ...MaxOnDemandThroughputExceeded",
         _GUIDE + "on-demand-capacity-mode-max-throughput.html"),
    Rule("table_throughput_quota",
         "An on-demand table serves table_write_units_quota / table_read_units_quota (40,000) units a second",
         "ThrottlingException: ...AccountLimitExceeded", _GUIDE + "ServiceQuotas.html"),
    Rule("on_demand_peak",
         "An on-demand table serves its warm throughput, then double its previous peak within 30 minutes; "
         "the throttling reason is a guess (KeyRange: the table has not split yet)",
         "ThrottlingException: ...KeyRangeThroughputExceeded", _GUIDE + "on-demand-capacity-mode.html", guess=True),
)

RULE_NAMES = frozenset(rule.name for rule in RULES)
GUESSES = tuple(rule.name for rule in RULES if rule.guess)


def rule_named(name: str) -> Rule:
    """The rule called ``name``; a clear error naming the rules that exist."""
    for rule in RULES:
        if rule.name == name:
            return rule
    raise ValidationError(f"no rule named {name!r}; the rules are {sorted(RULE_NAMES)}")


def rules_table() -> str:
    """The rules as a Markdown table (docs/testing.md holds this text)."""
    lines = ["| Rule | What it does | DynamoDB's answer | Source | Kind |", "|---|---|---|---|---|"]
    for rule in RULES:
        kind = "guess (`guesses=True`)" if rule.guess else "documented"
        lines.append(f"| `{rule.name}` | {rule.does} | {rule.answer} | {rule.source} | {kind} |")
    return "\n".join(lines)
