"""RotatingTimeSeriesTables in a fresh stack, and its rotation function read back from the template."""

from __future__ import annotations

from aws_cdk.assertions import Template

from cdk_ts.rotation.tables import RotatingTimeSeriesTables
from tests.support.nag import new_stack

#: How the rotation function is found in a template: by its handler, never by a logical ID.
ROTATION_HANDLER = {"Properties": {"Handler": "cdk_ts_runtime.handlers.rotation.handler"}}


def build(**props):
    """``(app, stack, tables)``: ``RotatingTimeSeriesTables(stack, "Telemetry", **props)``; prefix ``telemetry``."""
    app, stack = new_stack()
    props.setdefault("table_prefix", "telemetry")
    tables = RotatingTimeSeriesTables(stack, "Telemetry", **props)
    return app, stack, tables


def rotation_function(template: Template) -> dict:
    """The properties of the template's one rotation function."""
    (function,) = template.find_resources("AWS::Lambda::Function", ROTATION_HANDLER).values()
    return function["Properties"]


def rotation_config(template: Template) -> dict:
    """The rotation function's environment variables."""
    return rotation_function(template)["Environment"]["Variables"]
