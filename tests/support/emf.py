"""EMF lines as CloudWatch Logs would read them: a capture for writers, and a check against the specification.

The rules checked are those of CloudWatch's "Specification: Embedded metric format" (Amazon CloudWatch User
Guide): the line is one JSON object; ``_aws`` holds ``Timestamp`` (a number, epoch milliseconds) and
``CloudWatchMetrics`` (an array of MetricDirective objects); a MetricDirective holds ``Namespace`` (a string),
``Dimensions`` (an array of DimensionSet arrays of at most 30 strings, each naming a root member whose value is
a string) and ``Metrics`` (at most 100 MetricDefinition objects, each ``Name`` naming a root member whose value
is a number or an array of at most 100 numbers; ``Unit`` optional).
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from cdk_ts_runtime._emf import UNITS, EmfWriter


def emf_problems(line: str) -> list[str]:
    """What in ``line`` breaks the EMF specification; an empty list for a valid line."""
    try:
        document = json.loads(line)
    except json.JSONDecodeError as error:
        return [f"not JSON: {error}"]
    if not isinstance(document, dict):
        return ["the root is not a JSON object"]
    meta = document.get("_aws")
    if not isinstance(meta, dict):
        return ["no _aws object"]
    problems = []
    if not isinstance(meta.get("Timestamp"), int | float) or isinstance(meta.get("Timestamp"), bool):
        problems.append("_aws.Timestamp is not a number")
    directives = meta.get("CloudWatchMetrics")
    if not isinstance(directives, list):
        return [*problems, "_aws.CloudWatchMetrics is not an array"]
    for directive in directives:
        if not isinstance(directive.get("Namespace"), str) or not directive["Namespace"]:
            problems.append("a directive has no Namespace")
        dimension_names = set()
        for dimension_set in directive.get("Dimensions", []):
            if len(dimension_set) > 30:
                problems.append(f"a dimension set of {len(dimension_set)} (> 30)")
            problems += [f"dimension {n!r} is not a string member" for n in dimension_set
                         if not isinstance(document.get(n), str)]
            problems += [
                f"dimension {n!r}: {p}" for n in dimension_set for p in _dimension_problems(n, document.get(n))
            ]
            dimension_names.update(dimension_set)
        metrics = directive.get("Metrics")
        if not isinstance(metrics, list) or len(metrics) > 100:
            problems.append(f"Metrics is not an array of at most 100 ({metrics!r:.80})")
            continue
        for metric in metrics:
            name, value = metric.get("Name"), document.get(metric.get("Name"))
            problems += [f"metric {name!r}: {p}" for p in _metric_problems(name, value, dimension_names)]
            if "Unit" in metric and metric["Unit"] not in UNITS:
                problems.append(f"metric {name!r} unit {metric['Unit']!r}")
    return problems


def _text_problems(text: str, longest: int) -> list[str]:
    """CloudWatch's ``Dimension`` rules (API reference): 1-``longest`` ASCII characters, not all whitespace."""
    problems = []
    if not 1 <= len(text) <= longest:
        problems.append(f"{len(text)} characters (1-{longest})")
    if not text.strip():
        problems.append("no non-whitespace character")
    if not text.isascii() or any(ord(c) < 32 or ord(c) == 127 for c in text):
        problems.append("not ASCII without control characters")
    return problems


def _dimension_problems(name: str, value: object) -> list[str]:
    problems = [*_text_problems(name, 255), *(["starts with ':'"] if name.startswith(":") else [])]
    if name == "_aws":
        problems.append("is the metadata member")
    if isinstance(value, str):
        problems += [f"value {p}" for p in _text_problems(value, 1024)]
    return problems


def _metric_problems(name: object, value: object, dimension_names: set[str]) -> list[str]:
    """A MetricDatum's rules (API reference): a name of 1-255 characters, a finite value within ±2^360."""
    if not isinstance(name, str) or not 1 <= len(name) <= 255 or not name.strip() or name == "_aws":
        return ["not a name of 1-255 characters (and not _aws)"]
    problems = ["is also a dimension"] if name in dimension_names else []
    numbers = value if isinstance(value, list) and len(value) <= 100 else [value]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in numbers):
        return [*problems, "has no number member"]
    if not all(math.isfinite(v) and abs(v) <= 2.0**360 for v in numbers):
        problems.append(f"value {value!r} is not finite within ±2^360")
    return problems


def declared(document: dict[str, Any]) -> set[str]:
    """The metric names an EMF object declares."""
    return {m["Name"] for d in document["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}


class EmfLines:
    """Collects the lines an :class:`EmfWriter` writes, each checked against the specification as it comes.

    :param now: the harness time to note with each line (the rules proxy's clock, for alarms' view of time).
        Default: None — no time noted.
    """

    def __init__(self, now=None) -> None:
        self.lines: list[str] = []
        self.sent: list[tuple[datetime | None, dict[str, Any]]] = []
        self._now = now

    def write(self, line: str) -> None:
        """The ``write`` of an :class:`EmfWriter`: keep the line, refuse one that breaks the specification."""
        problems = emf_problems(line)
        assert not problems, (problems, line)
        self.lines.append(line)
        self.sent.append((self._now() if self._now else None, json.loads(line)))

    def writer(self, namespace: str = "cdk-ts") -> EmfWriter:
        """A writer in ``namespace`` whose lines come here."""
        return EmfWriter(namespace, write=self.write)

    def values(self, metric: str, **dimensions: str) -> list[float]:
        """Every value written for ``metric`` (with these dimension values), in order."""
        return [value for _when, value in self.timed(metric, **dimensions)]

    def timed(self, metric: str, **dimensions: str) -> list[tuple[datetime | None, float]]:
        """``(harness time, value)`` of every value written for ``metric``."""
        return [
            (when, document[metric]) for when, document in self.sent
            if metric in declared(document) and all(document.get(k) == v for k, v in dimensions.items())
        ]

    def documents(self) -> list[dict[str, Any]]:
        """Every object written."""
        return [document for _when, document in self.sent]
