"""Alarm actions shared by every construct that creates alarms: one place to say who is told."""

from __future__ import annotations

from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_sns as sns


class AlarmActions:
    """Mixin: ``add_alarm_action`` applies to every alarm the construct made and will make."""

    def _init_alarm_actions(self, alarm_topic: sns.ITopic | None) -> None:
        self._alarm_actions: list[cloudwatch.IAlarmAction] = []
        self._own_alarms: list[cloudwatch.Alarm] = []
        if alarm_topic is not None:
            self.add_alarm_action(cloudwatch_actions.SnsAction(alarm_topic))

    def add_alarm_action(self, *actions: cloudwatch.IAlarmAction) -> None:
        """Run ``actions`` (e.g. ``aws_cloudwatch_actions.SnsAction(topic)``) when any alarm of this construct fires.

        Applies to the alarms created so far and to any created later.
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
        return self._track_alarm(cloudwatch.Alarm(
            self,
            construct_id,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=description,
        ))

    def _track_alarm(self, alarm: cloudwatch.Alarm) -> cloudwatch.Alarm:
        for action in self._alarm_actions:
            alarm.add_alarm_action(action)
        self._own_alarms.append(alarm)
        return alarm
