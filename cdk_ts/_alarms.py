"""Alarm actions shared by every construct that creates alarms: one place to say who is told."""

from __future__ import annotations

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_sns as sns


class AlarmActions:
    """Mixin: opt-in default alarms, and ``add_alarm_action`` for every alarm the construct made and will make.

    A construct defines ``_default_alarms()`` (name -> alarm, built with ``_alarm_above``);
    ``add_default_alarms`` creates them once and keeps them in ``alarms``.
    """

    alarms: dict[str, cloudwatch.Alarm]

    def _init_alarm_actions(self) -> None:
        self._alarm_actions: list[cloudwatch.IAlarmAction] = []
        self._alarm_topics: list[sns.ITopic] = []
        self._own_alarms: list[cloudwatch.Alarm] = []
        self.alarms = {}

    def add_default_alarms(self, *, alarm_topic: sns.ITopic | None = None) -> dict[str, cloudwatch.Alarm]:
        """Create this construct's recommended alarms (once) and return them by name.

        A second call creates nothing new and returns the same alarms; a topic it is given is added
        to all of them. Each alarm is also a typed attribute (see the construct's docstring).

        :param alarm_topic: an SNS topic the alarms notify (same as ``add_alarm_action(SnsAction(topic))``).
            Default: None — the alarms get only the actions given to ``add_alarm_action``.
        """
        if alarm_topic is not None and not any(t is alarm_topic for t in self._alarm_topics):
            self._alarm_topics.append(alarm_topic)
            self.add_alarm_action(cloudwatch_actions.SnsAction(alarm_topic))
        if not self.alarms:
            self.alarms = self._default_alarms()
        return dict(self.alarms)

    def _default_alarms(self) -> dict[str, cloudwatch.Alarm]:
        raise NotImplementedError

    def add_alarm_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` (e.g. ``aws_cloudwatch_actions.SnsAction(topic)``) when any alarm of this construct fires.

        Applies to the alarms created so far and to any created later (``add_default_alarms``).
        """
        for action in actions:
            self._alarm_actions.append(action)
            for alarm in self._own_alarms:
                alarm.add_alarm_action(action)

    def _alarm_above(
        self,
        construct_id: str,
        metric: cloudwatch.IMetric,
        description: str,
        *,
        threshold: float = 0,
        evaluation_periods: int = 1,
    ) -> cloudwatch.Alarm:
        """An alarm (tracked, so it gets this construct's actions) when ``metric`` exceeds ``threshold``.

        Missing data is not breaching: these metrics are published only when something happens.
        """
        alarm = cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        )
        for action in self._alarm_actions:
            alarm.add_alarm_action(action)
        self._own_alarms.append(alarm)
        return alarm
