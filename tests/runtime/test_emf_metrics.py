"""Metrics as EMF log lines: what every cdk-ts function writes, checked against the specification, with no CloudWatch.

Each function runs with ``AWS_ENDPOINT_URL_CLOUDWATCH`` pointing at a closed local port and a hook that records
any CloudWatch request: a function that still called PutMetricData would fail or be seen.
"""

from __future__ import annotations

import json
from datetime import datetime

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts.testing._engines import free_port
from cdk_ts_runtime import TableLayout, ValidationError
from cdk_ts_runtime._archiver import ArchiverMetric
from cdk_ts_runtime._emf import MAX_METRICS_PER_OBJECT, EmfWriter, MetricPoint, emf_objects
from cdk_ts_runtime._rotation.config import ENV_ROTATION_CONFIG, RotationConfig
from cdk_ts_runtime._rotation.metrics import RotationMetric
from cdk_ts_runtime.handlers import archiver, custom_resource, rotation
from tests.support.cloudformation import CloudFormationReplies
from tests.support.emf import declared, emf_problems
from tests.support.examples import examples
from tests.support.streams import BUCKET, lambda_event, stream_records

#: Names and values a user might pass: short text of any character, numbers of any size.
_NAMES = st.text(max_size=6) | st.sampled_from(["_aws", ":d", " ", "Table", "A" * 256])
_VALUES = st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.sampled_from(
    [2.0**360, -(2.0**361), True]
)


def emf_lines(text: str) -> list[dict]:
    """The EMF objects among stdout's lines, each checked against the specification."""
    objects = []
    for line in text.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            assert emf_problems(line) == [], line
            objects.append(json.loads(line))
    return objects


@pytest.fixture
def cloudwatch_unreachable(monkeypatch, aws):
    """CloudWatch's endpoint is a closed local port, and every CloudWatch request any client makes is recorded."""
    monkeypatch.setenv("AWS_ENDPOINT_URL_CLOUDWATCH", f"http://127.0.0.1:{free_port()}")
    requests: list[str] = []
    session = boto3._get_default_session()
    session.events.register("before-send.cloudwatch", lambda request, **_: requests.append(request.url))
    yield requests
    session.events.unregister("before-send.cloudwatch")


class TestTheFormat:
    def test_more_than_100_metrics_are_split_so_each_object_declares_at_most_100_and_all_of_its_own(self):
        values = {f"M{i}": i for i in range(250)}
        objects = emf_objects("cdk-ts", values, dimensions={"TablePrefix": "t"}, timestamp_ms=1_700_000_000_000)

        assert [len(declared(o)) for o in objects] == [100, 100, 50]
        assert all(emf_problems(json.dumps(o)) == [] for o in objects)
        assert set().union(*map(declared, objects)) == set(values)  # every metric declared, none twice
        assert sum(map(len, map(declared, objects))) == len(values)
        for document in objects:
            assert all(document[name] == values[name] for name in declared(document))
            assert document["TablePrefix"] == "t" and document["_aws"]["Timestamp"] == 1_700_000_000_000
        assert MAX_METRICS_PER_OBJECT == 100

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"values": {"A": float("nan")}}, "'A' value nan must be a finite number"),
            ({"values": {"A": True}}, "'A' value True must be a finite number"),
            ({"values": {"A": 1}, "units": {"A": "Furlongs"}}, "unit 'Furlongs' is not a CloudWatch unit"),
            ({"values": {"A": 1}, "properties": {"A": "x"}}, r"properties \['A'\] are named like a metric"),
            ({"values": {"A": 1}, "dimensions": {f"D{i}": "v" for i in range(31)}}, "at most 30"),
            ({"values": {"A": 2.0**361}}, r"outside CloudWatch's range -2\^360..2\^360"),
            ({"values": {"A": 1}, "dimensions": {"T": "caf\u00e9"}}, "dimension 'T' value 'caf.' is not one"),
            ({"values": {"A": 1}, "dimensions": {"T": "a\nb"}}, "dimension 'T' value"),
            ({"values": {"A": 1}, "dimensions": {"T": ""}}, "dimension 'T' value '' is not one"),
            ({"values": {"A": 1}, "dimensions": {"T": "x" * 1025}}, "1-1024 ASCII"),
            ({"values": {"A": 1}, "dimensions": {"A": "x"}}, r"\['A'\] named both a metric and a dimension"),
            ({"values": {"_aws": 1}}, "metric name '_aws'"),
            ({"values": {"A": 1}, "dimensions": {"_aws": "x"}}, "dimension name '_aws'"),
            ({"values": {"": 1}}, "metric name '' must be"),
        ],
    )
    def test_what_cloudwatch_would_drop_is_refused_by_name(self, kwargs, message):
        with pytest.raises(ValidationError, match=message):
            emf_objects("cdk-ts", timestamp_ms=0, **kwargs)

    @settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.dictionaries(_NAMES, _VALUES, max_size=4),
        st.dictionaries(_NAMES, st.one_of(_NAMES, st.integers()), max_size=4),
        st.dictionaries(_NAMES, st.integers(), max_size=2),
        st.one_of(_NAMES, st.just("cdk-ts")),
    )
    def test_every_line_written_is_one_cloudwatch_accepts_or_the_input_is_refused(
        self, values, dimensions, properties, namespace
    ):
        # whatever a user passes: either a ValidationError naming it, or lines CloudWatch would extract whole
        written: list[str] = []
        writer = None
        try:
            writer = EmfWriter(namespace, write=written.append, clock=lambda: 1_700_000_000)
            writer.publish(values, dimensions=dimensions, properties=properties)
        except ValidationError as error:
            assert str(error)  # a message, naming the value
            return
        assert all(emf_problems(line) == [] for line in written), written

    def test_the_writer_writes_one_json_line_to_stdout_and_serves_as_a_sink(self, capsys):
        writer = EmfWriter("MyApp/Writers", clock=lambda: 1_700_000_000.5)
        writer(MetricPoint("ShardGrowths", 1, dimensions={"Table": "t"}, properties={"key": "device-1", "to": 4}))

        [document] = emf_lines(capsys.readouterr().out)
        assert document["_aws"] == {
            "Timestamp": 1_700_000_000_500,
            "CloudWatchMetrics": [{
                "Namespace": "MyApp/Writers", "Dimensions": [["Table"]],
                "Metrics": [{"Name": "ShardGrowths", "Unit": "Count"}],
            }],
        }
        assert (document["ShardGrowths"], document["Table"], document["key"], document["to"]) == (1, "t", "device-1", 4)


class TestEveryFunctionWritesEmfWithCloudWatchUnreachable:
    @pytest.fixture
    def rotation_env(self, monkeypatch):
        for name, value in TableLayout("telemetry").to_env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(ENV_ROTATION_CONFIG, RotationConfig().to_json())

    def test_the_rotation_writes_its_metrics_as_emf_and_creates_the_table(
        self, rotation_env, cloudwatch_unreachable, monkeypatch, capsys
    ):
        monkeypatch.setattr(rotation, "now", lambda: datetime.fromisoformat("2026-03-01T23:56:00+00:00"))
        report = rotation.handler({"Operation": "create_new", "time": "2026-03-01T23:56:00Z"}, None)

        assert [a["action"] for a in report["actions"]][:1] == ["create"]
        documents = emf_lines(capsys.readouterr().out)
        by_name = {name: d for d in documents for name in declared(d)}
        assert set(by_name) == {
            RotationMetric.NEXT_PERIOD_TABLE_MISSING, RotationMetric.FUTURE_PERIOD_TABLES,
            RotationMetric.FOREIGN_LOOKALIKE_TABLES, RotationMetric.FAILED_TABLES, RotationMetric.TTL_DRIFT_TABLES,
        }
        assert all(d["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "cdk-ts" for d in documents)
        assert all(d["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["TablePrefix"]] for d in documents)
        assert all(d["TablePrefix"] == "telemetry" for d in documents)
        assert by_name[RotationMetric.NEXT_PERIOD_TABLE_MISSING][RotationMetric.NEXT_PERIOD_TABLE_MISSING] == 0
        assert cloudwatch_unreachable == []

    def test_the_deploy_time_custom_resource_writes_the_same_metrics_and_answers_success(
        self, rotation_env, cloudwatch_unreachable, monkeypatch, capsys
    ):
        cloudformation = CloudFormationReplies()
        monkeypatch.setattr(custom_resource, "SSL_CONTEXT", cloudformation.client_context)
        try:
            rotation.handler({
                "RequestType": "Create", "ResponseURL": cloudformation.url,
                "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/S/1", "RequestId": "r-1",
                "LogicalResourceId": "DeployTimeReconcile", "ResourceType": "Custom::CdkTsRotation",
                "ResourceProperties": {},
            }, None)
        finally:
            cloudformation.close()
        assert [r["Status"] for r in cloudformation.replies] == ["SUCCESS"]

        documents = emf_lines(capsys.readouterr().out)
        assert RotationMetric.FAILED_TABLES in set().union(*map(declared, documents))
        assert all(d["TablePrefix"] == "telemetry" for d in documents)
        assert cloudwatch_unreachable == []

    def test_the_archiver_writes_one_line_per_batch_with_the_records_it_archived(
        self, stream_table, cloudwatch_unreachable, monkeypatch, capsys
    ):
        dynamodb, stream = stream_table
        for n in range(3):
            dynamodb.put_item(TableName="readings", Item={"pk": {"S": "d"}, "sk": {"N": str(n)}})
        monkeypatch.setenv("CDK_TS_ARCHIVE_BUCKET", BUCKET)
        monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "cdk-ts-archiver")

        assert archiver.handler(lambda_event(stream_records(stream)), None) == {"batchItemFailures": []}

        [document] = emf_lines(capsys.readouterr().out)
        assert declared(document) == {m.value for m in ArchiverMetric}
        assert document["_aws"]["CloudWatchMetrics"][0]["Dimensions"] == [["FunctionName"]]
        assert (document["FunctionName"], document["ArchivedRecords"]) == ("cdk-ts-archiver", 3)
        assert (document["ArchiveWriteFailures"], document["UnreadableRecords"]) == (0, 0)
        assert cloudwatch_unreachable == []


def test_the_units_are_cloudwatchs_own():
    import botocore.session

    from cdk_ts_runtime._emf import UNITS

    model = botocore.session.get_session().get_service_model("cloudwatch")
    assert set(model.shape_for("StandardUnit").enum) == UNITS
