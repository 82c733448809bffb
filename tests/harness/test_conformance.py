"""The rules proxy answers each case of the conformance corpus as DynamoDB does, on moto_server and dynalite.

Each case (tests/harness/conformance/cases.json) is replayed through the proxy with an unmodified boto3 client,
retries off, and the answer compared with DynamoDB's: HTTP status, ``__type`` on the wire, botocore's
``Error.Code``, the member names in the body and in ``error.response``, throttling reasons and the message
where a source quotes it. A failure names the case, what differed, and the case's sources.
"""

from __future__ import annotations

import json

import pytest

from tests.support.conformance import (
    FEATURES,
    NO_RETRIES,
    Answer,
    CorpusError,
    WireClient,
    expand,
    load_corpus,
    mismatches,
    run_step,
    setup_failure,
)

CORPUS = load_corpus()
#: The proxy fixture for each engine, and the features the engine lacks: dynalite answers UnknownOperationException
#: to UpdateTimeToLive and UpdateContinuousBackups, and has no streams (architect/dynalite#103: "No, it doesn't"
#: support TTL, its maintainer answers; streams are the open request #66).
ENGINES = {"moto_server": ("rules_proxy", set()), "dynalite": ("rules_proxy_dynalite", set(FEATURES))}


def _params():
    for case in CORPUS.cases:
        for engine, (_fixture, lacks) in ENGINES.items():
            if not set(case.needs) & lacks:
                yield pytest.param(engine, case, id=f"{case.id}-{engine}")


def _names_after(answer: Answer | None, names: dict[str, str]) -> None:
    """Learn ``${table_arn}`` from the CreateTable of ``${table}`` (each engine spells its own account)."""
    description = (answer.parsed.get("TableDescription") or {}) if answer and answer.code is None else {}
    if answer and answer.operation == "CreateTable" and description.get("TableName") == names["table"]:
        names["table_arn"] = description["TableArn"]


@pytest.mark.server
@pytest.mark.parametrize(("engine", "case"), list(_params()))
def test_proxy_answers_as_dynamodb(request, engine, case, unique_name):
    proxy = request.getfixturevalue(ENGINES[engine][0])
    if case.settings:
        proxy.configure(**case.settings)
    wire = WireClient(proxy.client(config=NO_RETRIES))
    names = {"table": f"{unique_name}c"}
    for step in case.setup:
        answer = run_step(step, proxy, wire, names)
        problem = setup_failure(step, answer)
        assert problem is None, f"case {case.id}: {problem}"
        _names_after(answer, names)

    answer = run_step(case.request, proxy, wire, names)

    problems = mismatches(case.expect, answer, names)
    sources = "; ".join(source["url"] for source in case.sources)
    assert not problems, (
        f"case {case.id} ({CORPUS.rules[case.rule]['rule']}) on {engine}: "
        + " | ".join(problems)
        + f" [sources: {sources}]"
    )


def test_every_rule_of_the_corpus_has_a_case():
    covered = {case.rule for case in CORPUS.cases}
    assert set(CORPUS.rules) - covered == set()


def _corpus_file(tmp_path, **case_changes):
    case = {
        "id": "c",
        "rule": "r",
        "request": {"call": "DescribeTable", "params": {"TableName": "${table}"}},
        "expect": {"status": 400, "type": "ResourceNotFoundException"},
        "sources": [{"url": "https://x"}],
    }
    case.update(case_changes)
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"rules": {"r": {"rule": "a rule"}}, "cases": [case]}))
    return path


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"sources": []}, "cites at least one source"),
        ({"rule": "nowhere"}, "not among the corpus's rules"),
        ({"expect": {"status": 400}}, "has a type"),
        ({"expect": {"status": 200, "type": "ValidationException"}}, "has a type"),
        ({"expect": {"status": 400, "type": "X", "mesage": "typo"}}, "unknown expect keys"),
        ({"setup": [{"call": "CreateTable", "advance": 1}]}, "exactly one of"),
        ({"needs": ["backups"]}, "known features"),
        ({"setup": [{"call": "CreateTable", "template": "provisoned"}]}, "unknown template"),
    ],
)
def test_load_corpus_refuses_a_malformed_case_naming_it(tmp_path, change, problem):
    with pytest.raises(CorpusError, match=problem) as excinfo:
        load_corpus(_corpus_file(tmp_path, **change))
    assert "case 'c'" in str(excinfo.value)


def test_expand_fills_names_and_padding_and_refuses_unknown_placeholders():
    assert expand({"${table}": ["${table}-a", "${pad:3}"]}, {"table": "t1"}) == {"t1": ["t1-a", "xxx"]}
    with pytest.raises(CorpusError, match=r"unknown placeholder \$\{tabel\}"):
        expand("${tabel}", {"table": "t1"})
