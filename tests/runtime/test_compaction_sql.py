"""DuckDB parses the raw lines into the same rows as the Python rules: values, NULLs, image rests and order."""

from __future__ import annotations

import gzip
import json

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cdk_ts_runtime._compaction import change_batches, compacted_schema
from cdk_ts_runtime._compaction_columns import column_value
from cdk_ts_runtime._compaction_plan import ColumnSpec, CompactionSettings, Granularity
from cdk_ts_runtime._compaction_sql import ORDINAL_BODY_SHIFT, parse_lines_sql
from tests.support.examples import examples

pa = pytest.importorskip("pyarrow")

#: Every declared type, scales above and below 6, a column beside another on the same attribute.
COLUMNS = (ColumnSpec("device", "string", attribute="pk"), ColumnSpec("label", "string"),
           ColumnSpec("count", "bigint"), ColumnSpec("ratio", "double"), ColumnSpec("temperature", "decimal(10,2)"),
           ColumnSpec("big", "decimal(38,0)"), ColumnSpec("tiny", "decimal(12,8)"), ColumnSpec("share", "decimal(4,4)"),
           ColumnSpec("flag", "boolean"), ColumnSpec("count_text", "string", attribute="count"))
SOURCES = sorted({c.source for c in COLUMNS})

#: Numbers as DynamoDB JSON may hold them (JSON's grammar: the archiver refuses anything else), and a few it never
#: sends, which must still come out the same both ways.
json_numbers = st.from_regex(r"-?(0|[1-9][0-9]{0,20})(\.[0-9]{1,12})?([eE][+-]?[0-9]{1,2})?", fullmatch=True)
odd_numbers = st.sampled_from(["+7", "007", "7.", ".5", "-0", "-0.00", "0.000000001", "1E+2", "2.5e-3", "", "-",
                               "abc", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                               "12345678901234567890123456789012345678", "20.550", "1.0", "1e3", "41.5", "0.125"])
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
attributes = st.one_of(
    st.builds(lambda n: {"N": n}, json_numbers | odd_numbers),
    st.builds(lambda s: {"S": s}, texts | odd_numbers),
    st.builds(lambda b: {"BOOL": b}, st.booleans()),
    st.just({"NULL": True}),
    st.just({"L": [{"N": "1"}]}),
)
images = st.dictionaries(st.sampled_from([*SOURCES, "other", "Pk", "ünï"]), attributes, max_size=8)


def line(number: int, new, old, keys) -> str:
    """One archive line as the archiver writes it (every field a JSON string or null)."""
    def text(image):
        return None if image is None else json.dumps(image, separators=(",", ":"), ensure_ascii=False)

    return json.dumps({
        "eventID": f"{number % 7:032x}", "eventName": "MODIFY", "sequenceNumber": str(10**20 + number),
        "approximateCreationDateTime": f"2026-03-01T{number % 24:02d}:00:00.{number:06d}+00:00", "table": "t",
        "keys": text(keys), "newImage": text(new), "oldImage": text(old), "userIdentity": None,
    }, separators=(",", ":"), ensure_ascii=False)


def both_ways(bodies: list[bytes], compaction: CompactionSettings) -> tuple[list[dict], list[dict]]:
    """The rows of ``change_batches`` (Python) and of ``parse_lines_sql`` (DuckDB), in line order."""
    python = pa.Table.from_batches(list(change_batches(bodies, compaction, ordinal=True)))
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    texts_ = [gzip.decompress(b).decode() for b in bodies]
    duck = connection.sql(f"SELECT * FROM ({parse_lines_sql(compaction)}) ORDER BY _ordinal",
                          params=[texts_, list(range(len(texts_)))]).to_arrow_table()
    names = compacted_schema(compaction).names
    assert duck.column_names == [*names, "_ordinal"]
    positions = [(o >> ORDINAL_BODY_SHIFT, o & (2**ORDINAL_BODY_SHIFT - 1)) for o in duck["_ordinal"].to_pylist()]
    assert positions == sorted(positions)
    assert duck.select(names).cast(compacted_schema(compaction)).schema == python.select(names).schema
    return python.select(names).to_pylist(), duck.select(names).to_pylist()


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(changes=st.lists(st.tuples(st.none() | images, st.none() | images, st.none() | images), min_size=1,
                        max_size=12),
       per_object=st.integers(1, 5), day=st.booleans())
def test_duckdb_parses_every_line_into_the_rows_python_does(changes, per_object, day):
    compaction = CompactionSettings(bucket="b", columns=COLUMNS,
                                    granularity=Granularity.DAY if day else Granularity.HOUR)
    lines = [line(n, *change) for n, change in enumerate(changes)]
    bodies = [gzip.compress(("\n".join(lines[i:i + per_object]) + "\n").encode())
              for i in range(0, len(lines), per_object)]

    python, duck = both_ways(bodies, compaction)

    assert duck == python


def test_values_past_a_column_are_null_both_ways_and_exponents_are_never_read_into_exact_columns():
    image = {"count": {"N": "1E+2"}, "temperature": {"N": "2.5e-3"}, "big": {"N": "1E+37"}, "tiny": {"N": "-0.00"},
             "ratio": {"N": "2.5e-3"}, "label": {"N": "1E+2"}, "share": {"N": "0.12345"}, "pk": {"S": "d\u0001"}}
    compaction = CompactionSettings(bucket="b", columns=COLUMNS)

    python, duck = both_ways([gzip.compress(line(1, image, None, {"pk": image["pk"]}).encode())], compaction)

    assert duck == python
    (row,) = duck
    assert (row["count"], row["temperature"], row["big"], row["share"]) == (None, None, None, None)
    assert row["ratio"] == 0.0025 and row["label"] == "1E+2" and str(row["tiny"]) == "0E-8"
    # the control character's escape keeps the image whole: its text is the archived one
    assert row["newimage"] == json.dumps(image, separators=(",", ":"), ensure_ascii=False)
    assert column_value(ColumnSpec("count", "bigint"), {"N": "1E+2"}) is None
