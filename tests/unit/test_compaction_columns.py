"""The compaction's column readers give what the rules give (``column_value``, ``attribute_from_column``) for any
attribute: the fast paths only skip work, never change a value or what leaves the image."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cdk_ts_runtime._compaction_columns import attribute_from_column, column_value, readers
from cdk_ts_runtime._compaction_plan import ColumnSpec
from tests.support.examples import examples

TYPES = ("string", "boolean", "bigint", "double", "decimal(6,2)", "decimal(10,2)", "decimal(38,0)", "decimal(5,5)",
         "decimal(38,10)", "decimal(3,0)")
NUMBER_TEXT = st.one_of(
    st.from_regex(r"-?[0-9]{1,22}(\.[0-9]{0,12})?", fullmatch=True),
    st.decimals(allow_nan=False, allow_infinity=False).map(str),
    st.sampled_from(["0", "-0", "0.0", "-0.00", "20.555", "20.50", "20.5", "1E+2", "1e-7", "0.0000001",
                     "9223372036854775807", "9223372036854775808", "-9223372036854775808", "00.5", "+5", "7.0",
                     "12345678901234567890123456789012345678", "NaN", "Infinity"]),
)
ATTRIBUTE = st.one_of(
    NUMBER_TEXT.map(lambda text: {"N": text}),
    st.text(max_size=8).map(lambda text: {"S": text}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}), st.just({"S": None}), st.just({"N": "1", "S": "1"}), st.just(None), st.just({}),
    st.just({"L": [{"N": "1"}]}),
)


def reference(spec, attribute):
    try:
        value = column_value(spec, attribute)
    except ValueError as error:
        return type(error)
    return value, value is not None and attribute_from_column(spec, value) == attribute


def fast(read, attribute):
    try:
        return read(attribute)
    except ValueError as error:
        return type(error)


@settings(max_examples=examples(250), deadline=None)
@given(ATTRIBUTE)
def test_every_reader_agrees_with_the_rules(attribute):
    specs = tuple(ColumnSpec(f"c{n}", t, attribute="a") for n, t in enumerate(TYPES))
    for spec, (source, read) in zip(specs, readers(specs), strict=True):
        assert source == "a"
        expected, found = reference(spec, attribute), fast(read, attribute)
        # repr: the same type, the same decimal scale, and NaN equal to NaN
        assert repr(found) == repr(expected), (spec.type, attribute)


def test_a_value_a_decimal_cannot_hold_exactly_is_none_never_rounded():
    ((_, read),) = readers((ColumnSpec("t", "decimal(10,2)"),))
    assert read({"N": "20.555"}) == (None, False)
    assert read({"N": "20.5"})[1] is False and str(read({"N": "20.5"})[0]) == "20.50"  # held, stays in the image
    assert str(read({"N": "20.55"})[0]) == "20.55" and read({"N": "20.55"})[1] is True
