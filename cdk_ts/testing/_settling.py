"""What DynamoDB does not settle at once: point-in-time recovery on a new table, tags, time to live.

Plain Python like ``rules.py`` (no sockets, a clock passed in); ``server.py`` asks these classes before it
forwards UpdateContinuousBackups, and answers ListTagsOfResource, UpdateTimeToLive and DescribeTimeToLive
from what they track. Every rule names its source next to the code that applies it; a number no source
gives is a ``RulesSettings`` field named as a guess.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from cdk_ts.testing._rules import RuleError, RulesSettings, validation_error


class BackupsWindow:
    """UpdateContinuousBackups refused for a while after a new table turns ACTIVE.

    botocore's service model lists ``ContinuousBackupsUnavailableException`` ("Backups have not yet been
    enabled for this table") among UpdateContinuousBackups' errors. That it answers right after a table turns
    ACTIVE is what DynamoDB's clients work around: scalar-labs/scalardb#347 waits for continuous backups to be
    enabled before turning on point-in-time recovery of a new table, and nasa/cumulus#1116 quotes a note that
    enabling it "fails ... if it is running against newly created tables". How long that lasts is not
    documented: ``backups_unavailable_seconds`` is a guess.
    """

    def __init__(self, settings: Callable[[], RulesSettings]) -> None:
        self._settings = settings
        self._active_at: dict[str, datetime] = {}

    def created(self, name: str, active_at: datetime) -> None:
        """``name`` was created through the proxy and turns ACTIVE at ``active_at``."""
        self._active_at[name] = active_at

    def check(self, name: str, now: datetime) -> None:
        """Refuse UpdateContinuousBackups on ``name`` while its backups are still being enabled."""
        active_at = self._active_at.get(name)
        if not self._settings().on("backups_after_create") or active_at is None:
            return
        if now >= active_at + timedelta(seconds=self._settings().backups_unavailable_seconds):
            return
        # The message's start is DynamoDB's as aws-amplify/amplify-backend#1654 quotes it ("Backups are being
        # enabled for the table"); the table name and "Please retry later" after it follow traces quoted in
        # public code. Clients should match the code, not the words.
        raise RuleError(
            "ContinuousBackupsUnavailableException",
            f"Backups are being enabled for the table: {name}. Please retry later",
        )

    def forget(self, name: str) -> None:
        """``name`` was deleted."""
        self._active_at.pop(name, None)


@dataclass
class _Lag:
    shown: list[dict]  # the tag set ListTagsOfResource returns until ``until``
    until: datetime


class TagLag:
    """ListTagsOfResource shows the previous (or an empty) tag set for a while after a change.

    "TagResource is an asynchronous operation. If you issue a ListTagsOfResource request immediately after a
    TagResource request, DynamoDB might return your previous tag set, if there was one, or an empty tag set.
    [...] ListTagsOfResource API will only reflect the changes after a few seconds."
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TagResource.html (UntagResource's page
    says the same). CreateTable's ``Tags`` lag as well: there was no previous set, so the set shown is empty.
    "A few seconds" is not a number: ``tag_lag_seconds`` is a guess.
    """

    def __init__(self, settings: Callable[[], RulesSettings]) -> None:
        self._settings = settings
        self._lags: dict[str, _Lag] = {}

    def changed(self, arn: str, before: list[dict], now: datetime) -> None:
        """The tags of ``arn`` changed at ``now``; ``before`` is the set they had (empty for a new table).

        A change during a lag keeps the set already shown: the older one is still what a read may return.
        """
        if self._settings().tag_lag_seconds <= 0 or not self._settings().on("tag_lag"):
            return
        lag = self._lags.get(arn)
        shown = lag.shown if lag is not None and now < lag.until else before
        self._lags[arn] = _Lag(shown, now + timedelta(seconds=self._settings().tag_lag_seconds))

    def shown(self, arn: str, now: datetime) -> list[dict] | None:
        """The tag set ListTagsOfResource returns for ``arn`` now, or None once the engine's own set is current."""
        lag = self._lags.get(arn)
        if lag is None:
            return None
        if now >= lag.until:
            del self._lags[arn]
            return None
        return list(lag.shown)

    def forget(self, name: str) -> None:
        """The table ``name`` was deleted: forget the lags of its ARN."""
        for arn in [a for a in self._lags if a.rsplit("/", 1)[-1] == name]:
            del self._lags[arn]


@dataclass
class TtlState:
    """One table's time to live as the harness tracks it."""

    enabled: bool = False
    attribute: str | None = None
    changed_at: datetime | None = None

    def status(self, now: datetime, settle_seconds: float) -> str:
        """ENABLING/DISABLING for ``settle_seconds`` after a change, then ENABLED/DISABLED."""
        settling = self.changed_at is not None and now < self.changed_at + timedelta(seconds=settle_seconds)
        if self.enabled:
            return "ENABLING" if settling else "ENABLED"
        return "DISABLING" if settling else "DISABLED"


class TimeToLive:
    """UpdateTimeToLive and DescribeTimeToLive from the harness's own state (dynalite has no TTL at all).

    "It can take up to one hour for the change to fully process. Any additional UpdateTimeToLive calls for
    the same table during this one hour duration result in a ValidationException."
    https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_UpdateTimeToLive.html
    The statuses are botocore's ``TimeToLiveStatus`` enum (ENABLING, DISABLING, ENABLED, DISABLED).
    """

    def __init__(self, settings: Callable[[], RulesSettings]) -> None:
        self._settings = settings
        self.tables: dict[str, TtlState] = {}

    def state_for(self, name: str, engine_description: dict | None = None) -> TtlState:
        """The tracked TTL of ``name``, first learnt from the engine's TimeToLiveDescription if it has one."""
        state = self.tables.get(name)
        if state is None:
            state = TtlState()
            if engine_description and engine_description.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
                state.enabled, state.attribute = True, engine_description.get("AttributeName")
            self.tables[name] = state
        return state

    def update(self, name: str, specification: dict, now: datetime) -> dict:
        """Apply an UpdateTimeToLive, or refuse it as DynamoDB does; the ``TimeToLiveSpecification`` answered."""
        state = self.state_for(name)
        enabled = bool(specification.get("Enabled"))
        # A repeat of the setting in force is refused. DynamoDB's wording as a real trace quotes it:
        # "ValidationException: TimeToLive is already disabled" (cloudposse/terraform-aws-dynamodb#94); the
        # enabling counterpart reads "TimeToLive is already enabled" (dynamoose/dynamoose#754 reports enabling
        # an enabled TTL refused).
        on = self._settings().on
        repeated = enabled == state.enabled and (not enabled or specification.get("AttributeName") == state.attribute)
        if on("ttl_already_set") and repeated:
            raise validation_error(f"TimeToLive is already {'enabled' if enabled else 'disabled'}")
        # One change an hour per table (API_UpdateTimeToLive, above). DynamoDB's wording, as aws-cdk's TTL
        # handler matches it exactly (aws/aws-cdk#13720).
        interval = timedelta(seconds=self._settings().ttl_update_interval_seconds)
        if on("ttl_once_an_hour") and state.changed_at is not None and now < state.changed_at + interval:
            raise validation_error("Time to live has been modified multiple times within a fixed interval")
        state.enabled = enabled
        state.attribute = specification.get("AttributeName") if enabled else state.attribute
        state.changed_at = now
        return {"Enabled": enabled, "AttributeName": specification.get("AttributeName")}

    def describe(self, name: str, now: datetime) -> dict:
        """DescribeTimeToLive's ``TimeToLiveDescription`` for ``name``."""
        state = self.state_for(name)
        settle = self._settings().ttl_settle_seconds if self._settings().on("ttl_settling") else 0.0
        status = state.status(now, settle)
        if status == "DISABLED":
            return {"TimeToLiveStatus": status}
        return {"TimeToLiveStatus": status, "AttributeName": state.attribute}

    def forget(self, name: str) -> None:
        """``name`` was deleted."""
        self.tables.pop(name, None)


class Settling:
    """The three together, as the proxy holds them; ``settings`` returns the settings in force."""

    def __init__(self, settings: Callable[[], RulesSettings]) -> None:
        self.backups = BackupsWindow(settings)
        self.tags = TagLag(settings)
        self.ttl = TimeToLive(settings)

    def forget(self, name: str) -> None:
        """The table ``name`` was deleted: forget what is tracked for it."""
        self.backups.forget(name)
        self.tags.forget(name)
        self.ttl.forget(name)
