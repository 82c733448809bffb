"""The DynamoDB conformance corpus (``tests/harness/conformance/cases.json``): load it, replay a case, compare.

A case is a request DynamoDB answers in a known way, with the answer and where it is quoted from. The runner
(``tests/harness/test_conformance.py``) replays each case through the rules proxy with an unmodified boto3
client and compares what botocore parsed, and what came over the wire, with the case. The format is in
tests/support/README.md ("The conformance corpus").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import ClientError

CORPUS = Path(__file__).resolve().parents[1] / "harness" / "conformance" / "cases.json"
DYNAMODB_ERROR_PREFIX = "com.amazonaws.dynamodb.v20120810#"
#: Each refusal is seen as DynamoDB sends it: botocore's retries would answer a throttle with a retry.
NO_RETRIES = Config(retries={"mode": "standard", "total_max_attempts": 1})
#: Engine features a case may need (``needs``); the runner leaves a case out on an engine that lacks one.
FEATURES = ("ttl", "streams", "continuous_backups")
_PLACEHOLDER = re.compile(r"\$\{([a-z_]+)(?::(\d+))?\}")
_EXPECT_KEYS = {"status", "type", "members", "message", "message_prefix", "throttling_reasons", "response"}
_STEP_KEYS = {"call", "template", "params", "repeat", "until_error", "advance", "set_time", "configure"}


class CorpusError(ValueError):
    """cases.json does not have the corpus's form; the message names the case and the field."""


@dataclass(frozen=True)
class Step:
    """One thing to do before (or as) the request: an API call, a clock move, or a settings change.

    A call's ``template`` names parameters in the corpus's ``templates`` that ``params`` complete or override (a
    table's usual definition, written once). ``repeat`` N sends a call N times (``${i}`` is the attempt, from 0);
    with ``until_error`` CODE it is sent until DynamoDB answers CODE, at most ``repeat`` times (a throttle arrives
    after a count only the service knows, so the case says which answer it waits for, not after how many calls).
    """

    call: str | None = None
    params: dict = field(default_factory=dict)
    repeat: int = 1
    until_error: str | None = None
    advance: float | None = None
    set_time: str | None = None
    configure: dict | None = None

    @classmethod
    def parse(cls, data: dict, where: str, templates: dict[str, dict]) -> Step:
        """A step from its JSON form, its template applied; unknown keys and templates are refused."""
        unknown = set(data) - _STEP_KEYS
        if unknown:
            raise CorpusError(f"{where}: unknown step keys {sorted(unknown)}; known: {sorted(_STEP_KEYS)}")
        kinds = [k for k in ("call", "advance", "set_time", "configure") if k in data]
        if len(kinds) != 1:
            raise CorpusError(f"{where}: a step is exactly one of call/advance/set_time/configure, got {kinds}")
        params = data.get("params", {})
        if "template" in data:
            if data["template"] not in templates:
                raise CorpusError(f"{where}: unknown template {data['template']!r}; known: {sorted(templates)}")
            params = {**templates[data["template"]], **params}
        return cls(
            call=data.get("call"),
            params=params,
            repeat=int(data.get("repeat", 1)),
            until_error=data.get("until_error"),
            advance=data.get("advance"),
            set_time=data.get("set_time"),
            configure=data.get("configure"),
        )


@dataclass(frozen=True)
class Expected:
    """DynamoDB's answer: HTTP status, ``__type``, member names, throttling reasons, message, response fields."""

    status: int
    type: str | None = None
    members: tuple[str, ...] = ()
    message: str | None = None
    message_prefix: str | None = None
    throttling_reasons: tuple[dict, ...] | None = None
    response: dict | None = None
    wire_type: str | None = None  # ``__type`` on the wire; set by the loader from the corpus's ``wire_types``

    @classmethod
    def parse(cls, data: dict, where: str, wire_types: dict[str, str]) -> Expected:
        """The expected answer from its JSON form; an error needs its type, a success no type."""
        unknown = set(data) - _EXPECT_KEYS
        if unknown:
            raise CorpusError(f"{where}: unknown expect keys {sorted(unknown)}; known: {sorted(_EXPECT_KEYS)}")
        status = int(data["status"])
        if (status == 200) == ("type" in data):
            raise CorpusError(f"{where}: an error answer (status != 200) has a type; a success has none")
        reasons = data.get("throttling_reasons")
        return cls(
            status=status,
            type=data.get("type"),
            members=tuple(data.get("members", ())),
            message=data.get("message"),
            message_prefix=data.get("message_prefix"),
            throttling_reasons=None if reasons is None else tuple(reasons),
            response=data.get("response"),
            wire_type=None
            if "type" not in data
            else wire_types.get(data["type"], DYNAMODB_ERROR_PREFIX + data["type"]),
        )


@dataclass(frozen=True)
class Case:
    """One conformance case: what to set up, what to send, and DynamoDB's answer with its source."""

    id: str
    rule: str
    request: Step
    expect: Expected
    sources: tuple[dict, ...]
    setup: tuple[Step, ...] = ()
    settings: dict = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    note: str | None = None


@dataclass(frozen=True)
class Corpus:
    """The rules (id -> what DynamoDB does and where it says so) and the cases that exercise them."""

    rules: dict[str, dict]
    cases: tuple[Case, ...]
    wire_types: dict[str, dict]


def load_corpus(path: Path = CORPUS) -> Corpus:
    """Read and check ``cases.json``: every case names a known rule, a source, a request and an answer."""
    data = json.loads(path.read_text())
    rules = data["rules"]
    # DynamoDB sends most errors as com.amazonaws.dynamodb.v20120810#Code; ``wire_types`` names those it sends under
    # another namespace, each with its source.
    wire_types = data.get("wire_types", {})
    templates = data.get("templates", {})
    cases, seen = [], set()
    for raw in data["cases"]:
        where = f"case {raw.get('id', '?')!r}"
        if raw.get("id") in seen:
            raise CorpusError(f"{where}: the id is used twice")
        seen.add(raw["id"])
        if raw.get("rule") not in rules:
            raise CorpusError(f"{where}: rule {raw.get('rule')!r} is not among the corpus's rules")
        sources = raw.get("sources") or []
        if not sources or not all(s.get("url") for s in sources):
            raise CorpusError(f"{where}: every case cites at least one source with a url")
        needs = tuple(raw.get("needs", ()))
        if set(needs) - set(FEATURES):
            raise CorpusError(f"{where}: needs {needs}; known features: {FEATURES}")
        request = Step.parse(raw["request"], f"{where} request", templates)
        if request.call is None:
            raise CorpusError(f"{where}: the request is an API call")
        cases.append(
            Case(
                id=raw["id"],
                rule=raw["rule"],
                request=request,
                expect=Expected.parse(raw["expect"], where, {k: v["type"] for k, v in wire_types.items()}),
                sources=tuple(sources),
                setup=tuple(Step.parse(s, f"{where} setup", templates) for s in raw.get("setup", ())),
                settings=raw.get("settings", {}),
                needs=needs,
                note=raw.get("note"),
            )
        )
    return Corpus(rules=rules, cases=tuple(cases), wire_types=wire_types)


def expand(value, names: dict[str, str]):
    """``value`` with ``${name}`` replaced from ``names`` and ``${pad:N}`` by N letters (large items stay short)."""
    if isinstance(value, str):

        def replace(match: re.Match) -> str:
            key, number = match.group(1), match.group(2)
            if key == "pad":
                return "x" * int(number)
            if key not in names:
                raise CorpusError(f"unknown placeholder ${{{key}}} in {value[:80]!r}; known: {sorted(names)}")
            return names[key]

        return _PLACEHOLDER.sub(replace, value)
    if isinstance(value, dict):
        return {expand(k, names): expand(v, names) for k, v in value.items()}
    if isinstance(value, list):
        return [expand(v, names) for v in value]
    return value


@dataclass
class Answer:
    """What one API call got back: as botocore parsed it, and as it came over the wire."""

    operation: str
    status: int
    code: str | None  # botocore's Error.Code; None for a success
    parsed: dict  # the response, or ClientError.response
    wire: dict  # the raw JSON body


class WireClient:
    """A boto3 client that also keeps the raw body of each answer (botocore's ``after-call`` event, unmodified)."""

    def __init__(self, client) -> None:
        self.client = client
        self._last: tuple[int, bytes] | None = None
        client.meta.events.register("after-call.dynamodb", self._record)

    def _record(self, http_response, **_kwargs) -> None:
        self._last = (http_response.status_code, http_response.content)

    def call(self, operation: str, params: dict) -> Answer:
        """Send ``operation`` with ``params``; a refusal is returned as an Answer, not raised."""
        self._last = None
        method = getattr(self.client, xform_name(operation))
        try:
            parsed, code = method(**params), None
        except ClientError as error:
            parsed, code = error.response, error.response["Error"]["Code"]
        status, body = self._last if self._last is not None else (parsed["ResponseMetadata"]["HTTPStatusCode"], b"")
        return Answer(operation, status, code, parsed, json.loads(body) if body else {})


def run_step(step: Step, proxy, wire: WireClient, names: dict[str, str]) -> Answer | None:
    """Do ``step``; an API call's last answer is returned (setup steps must not be refused unexpectedly)."""
    if step.configure is not None:
        proxy.configure(**step.configure)
        return None
    if step.advance is not None:
        proxy.advance(step.advance)
        return None
    if step.set_time is not None:
        proxy.set_time(datetime.fromisoformat(step.set_time))
        return None
    answer = None
    for i in range(step.repeat):
        answer = wire.call(step.call, expand(step.params, {**names, "i": str(i)}))
        if answer.code is not None:  # the awaited error, or one that ends the step (the caller says which)
            return answer
    return answer


def setup_failure(step: Step, answer: Answer | None) -> str | None:
    """Why a setup step's answer means the case cannot be replayed (None: it did what it was for)."""
    if answer is None:
        return None
    if step.until_error:
        if answer.code != step.until_error:
            return f"setup {step.call} never answered {step.until_error} in {step.repeat} calls (last: {answer.code})"
        return None
    if answer.code is not None:
        return f"setup {step.call} was refused: {answer.code}: {answer.parsed['Error'].get('Message')}"
    return None


def mismatches(expect: Expected, answer: Answer, names: dict[str, str]) -> list[str]:
    """Every way ``answer`` differs from DynamoDB's answer in the case ([] when it conforms)."""
    problems = []
    if answer.status != expect.status:
        problems.append(f"HTTP status {answer.status}, DynamoDB answers {expect.status}")
    parsed_status = answer.parsed.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if parsed_status != answer.status:
        problems.append(f"botocore's HTTPStatusCode {parsed_status} differs from the wire's {answer.status}")
    if expect.type is None:
        if answer.code is not None:
            problems.append(f"refused with {answer.code}: {answer.parsed['Error'].get('Message')!r}")
        elif expect.response is not None:
            problems += _subset_mismatches(expand(expect.response, names), answer.parsed, "response")
        return problems
    if answer.code != expect.type:
        problems.append(f"botocore's Error.Code {answer.code!r}, DynamoDB answers {expect.type!r}")
    wire_type = answer.wire.get("__type")
    if wire_type != expect.wire_type:
        problems.append(f"__type on the wire {wire_type!r}, DynamoDB sends {expect.wire_type!r}")
    wire_members = sorted(set(answer.wire) - {"__type"})
    if wire_members != sorted(expect.members):
        problems.append(f"members on the wire {wire_members}, DynamoDB sends {sorted(expect.members)}")
    for member in expect.members:
        if member != "message" and member not in answer.parsed:
            problems.append(f"botocore did not parse member {member!r} into error.response")
    message = answer.parsed.get("Error", {}).get("Message")
    if expect.message is not None and message != expand(expect.message, names):
        problems.append(f"message {message!r}, DynamoDB says {expand(expect.message, names)!r}")
    if expect.message_prefix is not None and not (message or "").startswith(expand(expect.message_prefix, names)):
        problems.append(f"message {message!r} does not start as DynamoDB's {expand(expect.message_prefix, names)!r}")
    if expect.throttling_reasons is not None:
        member = next((m for m in expect.members if m.lower() == "throttlingreasons"), None)
        reasons = answer.parsed.get(member) if member else None
        wanted = expand(list(expect.throttling_reasons), names)
        if reasons != wanted:
            problems.append(f"throttling reasons {reasons}, DynamoDB sends {wanted}")
    return problems


def _subset_mismatches(wanted, got, path: str) -> list[str]:
    """Where ``got`` lacks or differs from ``wanted`` (dicts: wanted's keys only; anything else: equal)."""
    if isinstance(wanted, dict):
        if not isinstance(got, dict):
            return [f"{path} is {got!r}, DynamoDB answers {wanted!r}"]
        problems = []
        for key, value in wanted.items():
            if key not in got:
                problems.append(f"{path}.{key} is missing; DynamoDB answers {value!r}")
            else:
                problems += _subset_mismatches(value, got[key], f"{path}.{key}")
        return problems
    return [] if wanted == got else [f"{path} is {got!r}, DynamoDB answers {wanted!r}"]
