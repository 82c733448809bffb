"""Alarm actions shared by every construct that creates alarms: one place to say who is told.

``AlarmBook`` is the composed object (the alarms one construct made and the actions each runs);
``AlarmingConstruct`` is the base class of a construct with opt-in default alarms, which creates its book in
its constructor and gives the construct ``alarms``, ``add_default_alarms`` and ``add_alarm_action``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_sns as sns
from constructs import Construct

from cdk_ts._abstract import AbstractConstructMeta


class AlarmBook:
    """The alarms one construct made, and the actions every one of them runs, made so far or later.

    :param scope: the construct the alarms are created in (their construct IDs are under it).
    """

    def __init__(self, scope: Construct) -> None:
        """Start with no alarms and no actions."""
        self._scope = scope
        self._actions: list[cloudwatch.IAlarmAction] = []
        self._topics: list[sns.ITopic] = []
        self._made: list[cloudwatch.Alarm] = []
        #: The default alarms by name, once ``add_defaults`` has created them; empty until then.
        self.defaults: dict[str, cloudwatch.Alarm] = {}

    def add_defaults(
        self, create: Callable[[], Mapping[str, cloudwatch.Alarm]], alarm_topic: sns.ITopic | None
    ) -> dict[str, cloudwatch.Alarm]:
        """Call ``create`` once (later calls return the same alarms) and add ``alarm_topic``'s action to every alarm."""
        if alarm_topic is not None and not any(t is alarm_topic for t in self._topics):
            self._topics.append(alarm_topic)
            self.add_action(cloudwatch_actions.SnsAction(alarm_topic))
        if not self.defaults:
            self.defaults = dict(create())
        return dict(self.defaults)

    def add_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` when any alarm of this book fires: those made so far and those made later."""
        for action in actions:
            self._actions.append(action)
            for alarm in self._made:
                alarm.add_alarm_action(action)

    def above(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        description: str,
        *,
        threshold: float = 0,
        evaluation_periods: int = 1,
    ) -> cloudwatch.Alarm:
        """An alarm (kept here, so it gets every action) when ``metric`` exceeds ``threshold``.

        Missing data is not breaching: these metrics are published only when something happens.
        """
        alarm = cloudwatch.Alarm(
            self._scope,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        for action in self._actions:
            alarm.add_alarm_action(action)
        self._made.append(alarm)
        return alarm


class AlarmingConstruct(Construct, metaclass=AbstractConstructMeta):
    """Base of a construct with opt-in default alarms and ``add_alarm_action`` for every alarm it made and will make.

    Its constructor creates the construct's :class:`AlarmBook`. It is the only base of a construct that owns
    alarms and nothing else (``ArchiveCompaction``), and the first base of an owning construct whose other
    base holds what an import of it can do too (``RotatingTimeSeriesTables(AlarmingConstruct,
    RotatingTimeSeriesTablesBase)``): it passes that base's constructor arguments on. A subclass defines
    ``_create_default_alarms()`` (name -> alarm, each made with ``_alarm_above``); Python refuses to
    instantiate one that does not.
    """

    def __init__(self, scope: Construct, construct_id: str, *args: Any, **kwargs: Any) -> None:
        """Create the construct (through the next base, with ``args`` and ``kwargs``) and its empty alarm book.

        :param scope: the parent construct.
        :param construct_id: the construct ID.
        :param args: the next base's other positional arguments. Default: none.
        :param kwargs: the next base's keyword arguments. Default: none.
        """
        super().__init__(scope, construct_id, *args, **kwargs)
        self._alarm_book = AlarmBook(self)

    @property
    def alarms(self) -> dict[str, cloudwatch.Alarm]:
        """The default alarms by name, once ``add_default_alarms`` has created them; empty until then."""
        return self._alarm_book.defaults

    def add_default_alarms(self, *, alarm_topic: sns.ITopic | None = None) -> dict[str, cloudwatch.Alarm]:
        """Create this construct's recommended alarms (once) and return them by name.

        A second call creates nothing new and returns the same alarms; a topic it is given is added
        to all of them. Each alarm is also a typed attribute (see the construct's docstring).

        :param alarm_topic: an SNS topic the alarms notify (same as ``add_alarm_action(SnsAction(topic))``).
            Default: None — the alarms get only the actions given to ``add_alarm_action``.
        """
        return self._alarm_book.add_defaults(self._create_default_alarms, alarm_topic)

    def add_alarm_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` (e.g. ``aws_cloudwatch_actions.SnsAction(topic)``) when any alarm of this construct fires.

        Applies to the alarms created so far and to any created later (``add_default_alarms``).
        """
        self._alarm_book.add_action(*actions)

    @abstractmethod
    def _create_default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        """This construct's recommended alarms by name, each made with ``_alarm_above``; called once."""

    @property
    def _alarm_above(self) -> Callable[..., cloudwatch.Alarm]:
        """This construct's :meth:`AlarmBook.above`: an alarm that gets every action, made and later added."""
        return self._alarm_book.above
