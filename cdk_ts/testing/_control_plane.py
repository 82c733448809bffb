"""The harness's control plane: CreateTable/UpdateTable/DeleteTable rules and the table-state overlay on DescribeTable.

The UpdateTable rules themselves are in ``_update_rules``; the errors, settings and table state in ``_rules``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from cdk_ts.testing import _update_rules
from cdk_ts.testing._description import described, reported_when_set
from cdk_ts.testing._rules import (
    ON_DEMAND_WARM_READ,
    ON_DEMAND_WARM_WRITE,
    RuleError,
    RulesSettings,
    TableState,
    _is_decrease,
    table_name_of,
    validation_error,
)


class ControlPlane:
    """CreateTable/UpdateTable/DeleteTable rules and the table-state overlay on DescribeTable."""

    TRANSITIONAL = ("CREATING", "UPDATING", "DELETING")

    def __init__(self, settings: RulesSettings) -> None:
        self.settings = settings
        self.tables: dict[str, TableState] = {}

    # -- status windows and the account-wide limit ------------------------------------------------------
    def in_flight(self, now: datetime) -> int:
        """Tables in CREATING/UPDATING/DELETING right now."""
        return sum(1 for t in self.tables.values() if t.current_status(now) in self.TRANSITIONAL)

    def _check_limit(self, now: datetime) -> None:
        # "For most purposes, up to 500 simultaneous table operations are allowed per account. These
        # operations include CreateTable, UpdateTable, DeleteTable, ..." (LimitExceededException in the
        # API reference, https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html#API_UpdateTable_Errors,
        # and https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html).
        # The wording is DynamoDB's "Subscriber limit exceeded: Only N tables can be created, updated,
        # or deleted simultaneously".
        limit = self.settings.control_plane_limit
        if self.settings.on("tables_in_transition_limit") and self.in_flight(now) >= limit:
            raise RuleError(
                "LimitExceededException",
                f"Subscriber limit exceeded: Only {limit} tables can be created, updated, or deleted simultaneously",
            )

    def _check_not_in_use(self, name: str, now: datetime) -> None:
        # "UpdateTable is an asynchronous operation; while it's executing, the table status changes from
        # ACTIVE to UPDATING. While it's UPDATING, you can't issue another UpdateTable request."
        # https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html
        # The message is the one hashicorp/terraform#9559 reports.
        state = self.tables.get(name)
        if not self.settings.on("resource_in_use"):
            return
        if state is not None and (status := state.current_status(now)) in self.TRANSITIONAL:
            verb = {"CREATING": "created", "UPDATING": "updated", "DELETING": "deleted"}[status]
            raise RuleError(
                "ResourceInUseException",
                f"Attempt to change a resource which is still in use: Table is being {verb}: {name}",
            )

    def state_for(self, name: str, description: dict | None = None) -> TableState:
        """The tracked state of ``name``, first learnt from the engine's description when there is none."""
        state = self.tables.get(name)
        if state is None:
            state = TableState(name=name) if description is None else _state_from_description(name, description)
            self.tables[name] = state
        return state

    # -- CreateTable ---------------------------------------------------------------------------------------
    def check_create(self, request: dict, now: datetime) -> None:
        """Refuse a CreateTable past the control-plane limits."""
        self._check_limit(now)
        # "When you are creating a table with one or more secondary indexes, you can have up to 250 such
        # requests running at a time." (LimitExceededException, API reference; ServiceQuotas.html.)
        # Harness wording for the message, DynamoDB's exception.
        indexed = request.get("GlobalSecondaryIndexes") or request.get("LocalSecondaryIndexes")
        if indexed and self.settings.on("indexed_creates_limit"):
            limit = self.settings.control_plane_limit_with_indexes
            creating = sum(1 for t in self.tables.values()
                           if t.secondary_indexes and t.current_status(now) == "CREATING")
            if creating >= limit:
                raise RuleError(
                    "LimitExceededException",
                    f"Subscriber limit exceeded: Only {limit} tables with secondary indexes can be created "
                    "simultaneously",
                )

    def is_creating(self, name: str, now: datetime) -> bool:
        """Whether ``name`` is CREATING at ``now`` (reads only: safe without the control-plane lock)."""
        state = self.tables.get(name)
        return state is not None and state.current_status(now) == "CREATING"

    def check_data_plane(self, names: list[str], now: datetime) -> None:
        """Refuse reads and writes on a CREATING table.

        "You can perform read and write operations only on an ACTIVE table."
        https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_CreateTable.html
        The error is ResourceNotFoundException ("... or its status might not be ACTIVE", same reference)
        with DynamoDB's message. UPDATING tables stay readable and writable, as on DynamoDB.
        """
        if not (self.settings.refuse_data_plane_while_creating and self.settings.on("no_data_while_creating")):
            return
        for name in names:
            if self.is_creating(name, now):
                raise RuleError("ResourceNotFoundException", "Requested resource not found")

    def record_create(self, request: dict, now: datetime) -> TableState:
        """The engine created the table: CREATING for ``create_seconds``, harness-owned fields from the request."""
        name = table_name_of(request["TableName"])
        state = TableState(name=name)
        state.billing_mode = request.get("BillingMode", "PROVISIONED")
        throughput = request.get("ProvisionedThroughput") or {}
        state.read_capacity = int(throughput.get("ReadCapacityUnits", 0))
        state.write_capacity = int(throughput.get("WriteCapacityUnits", 0))
        state.warm_read, state.warm_write = _initial_warm(state)
        if state.billing_mode == "PAY_PER_REQUEST":
            state.pay_per_request_since = now
        warm = request.get("WarmThroughput") or {}
        state.warm_read = max(state.warm_read, int(warm.get("ReadUnitsPerSecond", 0)))
        state.warm_write = max(state.warm_write, int(warm.get("WriteUnitsPerSecond", 0)))
        state.table_class = request.get("TableClass", "STANDARD")
        state.on_demand_throughput = request.get("OnDemandThroughput")
        state.deletion_protection = bool(request.get("DeletionProtectionEnabled", False))
        state.secondary_indexes = bool(request.get("GlobalSecondaryIndexes") or request.get("LocalSecondaryIndexes"))
        state.explicit = reported_when_set(request)
        state.start_window("CREATING", now + timedelta(seconds=self.settings.create_seconds))
        self.tables[name] = state
        return state

    # -- UpdateTable ---------------------------------------------------------------------------------------
    def check_update(self, request: dict, description: dict, now: datetime) -> dict:
        """Refuse an UpdateTable DynamoDB refuses; otherwise the changes it makes, for ``record_update``.

        ``description`` is the engine's current ``Table`` description.
        """
        name = table_name_of(request["TableName"])
        # A table-class change must be alone in its call: DynamoDB's own message, as reported in
        # hashicorp/terraform-provider-aws#28497 (fixed in #29816, acceptance-tested against AWS).
        on = self.settings.on
        if on("table_class_alone") and "TableClass" in request and set(request) - {"TableName", "TableClass"}:
            raise validation_error(
                "One or more parameter values were invalid: "
                "TableClass modification must be the only operation in the request"
            )
        state = self.state_for(name, description)
        # Billing mode and throughput must agree. DynamoDB's wording, as dynalite (written against DynamoDB's
        # answers) mirrors it; BillingMode/ProvisionedThroughput in
        # https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTable.html
        billing = request.get("BillingMode", state.billing_mode)
        agree = on("billing_and_throughput_agree")
        if agree and "ProvisionedThroughput" in request and billing == "PAY_PER_REQUEST":
            raise validation_error(
                "One or more parameter values were invalid: "
                "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST"
            )
        if agree and request.get("BillingMode") == "PROVISIONED" and "ProvisionedThroughput" not in request:
            raise validation_error(
                "One or more parameter values were invalid: "
                "ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
            )
        self._check_not_in_use(name, now)
        self._check_limit(now)
        if on("one_index_change"):
            _update_rules.check_index_changes(request)
        changes = _update_rules.update_changes(request, state)
        no_op = not changes and ("ProvisionedThroughput" in request or set(request) == {"TableName"})
        if no_op and on("no_op_update"):
            raise _update_rules.no_op_error(request, state)
        if on("index_change_alone"):
            _update_rules.check_alone_with_index_changes(request, changes)
        if on("warm_throughput_only_rises"):
            _update_rules.check_warm(request, state)
        if on("capacity_decreases_per_day"):
            _update_rules.check_decrease(self.settings, changes, state, now)
        if on("on_demand_switches_per_day"):
            _update_rules.check_on_demand_switch(self.settings, changes, state, now)
        if on("table_class_changes_per_30_days"):
            _update_rules.check_class_change(self.settings, changes, state, now)
        return changes

    def record_update(self, name: str, changes: dict, now: datetime) -> TableState:
        """Apply accepted ``changes`` to the tracked state; the table is UPDATING for ``update_seconds``."""
        state = self.tables[name]
        state.pending_change = None
        state.explicit |= reported_when_set(changes)
        if _is_decrease(changes, state):
            state.decreases.append(now)
            state.last_decrease, state.pending_change = now, "decrease"
        if _is_increase(changes, state):
            state.last_increase, state.pending_change = now, "increase"
        if "ProvisionedThroughput" in changes and state.billing_mode == "PROVISIONED":
            state.reported_capacity = (state.read_capacity, state.write_capacity)
        if changes.get("BillingMode") == "PAY_PER_REQUEST":
            state.on_demand_switches.append(now)
            state.pay_per_request_since = now
            state.billing_mode = "PAY_PER_REQUEST"
            state.read_capacity = state.write_capacity = 0
            # A table switched to on-demand can serve at least what a new on-demand table serves
            # (on-demand-capacity-mode.html, "Initial throughput"): warm throughput never goes down.
            state.warm_read = max(state.warm_read, ON_DEMAND_WARM_READ)
            state.warm_write = max(state.warm_write, ON_DEMAND_WARM_WRITE)
        elif changes.get("BillingMode") == "PROVISIONED":
            state.billing_mode = "PROVISIONED"
        if "ProvisionedThroughput" in changes:
            state.read_capacity, state.write_capacity = changes["ProvisionedThroughput"]
            # "As you increase the provisioned throughput beyond these values, the warm throughput will
            # automatically adjust to the new higher values" (warm-throughput-scenarios.html).
            state.warm_read = max(state.warm_read, state.read_capacity)
            state.warm_write = max(state.warm_write, state.write_capacity)
        if "TableClass" in changes:
            state.table_class = changes["TableClass"]
            state.class_updates.append(now)
        if "WarmThroughput" in changes:
            warm = changes["WarmThroughput"]
            state.warm_read = max(state.warm_read, int(warm.get("ReadUnitsPerSecond", 0)))
            state.warm_write = max(state.warm_write, int(warm.get("WriteUnitsPerSecond", 0)))
        if "OnDemandThroughput" in changes:
            state.on_demand_throughput = changes["OnDemandThroughput"]
        if "DeletionProtectionEnabled" in changes:
            state.deletion_protection = changes["DeletionProtectionEnabled"]
        # Every accepted UpdateTable makes the table UPDATING, deletion-protection-only ones included
        # (conservative: DynamoDB documents UPDATING for UpdateTable as a whole).
        state.start_window("UPDATING", now + timedelta(seconds=self.settings.update_seconds))
        state.updates += 1
        return state

    # -- DeleteTable ---------------------------------------------------------------------------------------
    def already_deleting(self, name: str, now: datetime) -> bool:
        """Whether ``name`` is DELETING: "If table is already in the DELETING state, no error is returned."

        https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_DeleteTable.html -- the answer is the
        table's description (DELETING), and the DELETING window it is in goes on unchanged.
        """
        state = self.tables.get(name)
        return state is not None and state.current_status(now) == "DELETING"

    def check_delete(self, name: str, description: dict, now: datetime) -> None:
        """Refuse a DeleteTable on a table in transition, a protected table, or past the limit."""
        self._check_not_in_use(name, now)
        state = self.state_for(name, description)
        if state.deletion_protection and self.settings.on("deletion_protection"):
            # Deletion protection (API_DeleteTable / DeletionProtectionEnabled); DynamoDB's wording as
            # nubo-db/dynoxide#46 and aws-bench/aws-bench#41 quote it.
            raise validation_error(
                "Resource cannot be deleted as it is currently protected against deletion. "
                "Disable deletion protection first."
            )
        self._check_limit(now)

    def record_delete(self, name: str, now: datetime) -> TableState:
        """DELETING for ``delete_seconds``; the server deletes it on the engine once ``due_deletes`` names it."""
        state = self.tables[name]
        state.start_window("DELETING", now + timedelta(seconds=self.settings.delete_seconds))
        return state

    def due_deletes(self, now: datetime) -> list[str]:
        """Tables whose DELETING window has ended: delete them on the engine and ``forget`` them."""
        return [n for n, t in self.tables.items() if t.status == "DELETING" and t.window_over(now)]

    def settle(self, now: datetime) -> None:
        """Bring every table's state up to ``now`` (windows that have ended end), before the clock moves."""
        for state in self.tables.values():
            state.current_status(now)

    def seen_by_wait(self, name: str, now: datetime) -> None:
        """A DescribeTable reported ``name``'s state: a transitional window ends at the next request, when
        ``windows_end_at_first_wait`` is on (the waiter saw CREATING, UPDATING or DELETING; the next look is on)."""
        state = self.tables.get(name)
        if (self.settings.windows_end_at_first_wait and state is not None
                and state.current_status(now) in self.TRANSITIONAL):
            state.seen = True

    def forget(self, name: str) -> None:
        """Drop everything tracked for ``name`` (deleted, or a fresh table of the same name follows)."""
        self.tables.pop(name, None)

    # -- the description overlay -----------------------------------------------------------------------------
    def overlay(self, description: dict, now: datetime) -> dict:
        """The engine's ``TableDescription`` with what DynamoDB would report from the tracked state."""
        state = self.tables.get(str(description.get("TableName", "")))
        if state is None:
            return description
        return described(state, description, now)


def _state_from_description(name: str, description: dict) -> TableState:
    """The state of a table the harness has not seen, learnt from the engine's description of it."""
    state = TableState(name=name)
    billing = (description.get("BillingModeSummary") or {}).get("BillingMode", "PROVISIONED")
    throughput = description.get("ProvisionedThroughput") or {}
    state.billing_mode = billing
    since = (description.get("BillingModeSummary") or {}).get("LastUpdateToPayPerRequestDateTime")
    if isinstance(since, int | float):
        state.pay_per_request_since = datetime.fromtimestamp(since, UTC)
    state.read_capacity = int(throughput.get("ReadCapacityUnits", 0))
    state.write_capacity = int(throughput.get("WriteCapacityUnits", 0))
    warm = description.get("WarmThroughput") or {}
    state.warm_read, state.warm_write = _initial_warm(state)
    state.warm_read = max(state.warm_read, int(warm.get("ReadUnitsPerSecond", 0)))
    state.warm_write = max(state.warm_write, int(warm.get("WriteUnitsPerSecond", 0)))
    state.table_class = (description.get("TableClassSummary") or {}).get("TableClass", "STANDARD")
    state.deletion_protection = bool(description.get("DeletionProtectionEnabled", False))
    return state


def _initial_warm(state: TableState) -> tuple[int, int]:
    # On-demand: 12,000 / 4,000 (warm-throughput-scenarios.html). Provisioned: its provisioned capacity,
    # as moto reports (provisioned tables accept warm values below 12,000/4,000:
    # hashicorp/terraform-provider-aws#49894); it rises with the provisioned capacity (same page).
    if state.billing_mode == "PAY_PER_REQUEST":
        return ON_DEMAND_WARM_READ, ON_DEMAND_WARM_WRITE
    return state.read_capacity, state.write_capacity


def _is_increase(changes: dict, state: TableState) -> bool:
    if "ProvisionedThroughput" not in changes or state.billing_mode != "PROVISIONED":
        return False
    read, write = changes["ProvisionedThroughput"]
    return read > state.read_capacity or write > state.write_capacity
