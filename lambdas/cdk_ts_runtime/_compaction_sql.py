"""The raw lines parsed by DuckDB into the compacted layer's rows: the rules of :mod:`._compaction_columns` in SQL.

Parsing each line in Python (two ``json.loads``, the column rules, a ``json.dumps`` of the image's rest) cost
about 100 µs of CPU a change (``bench/README.md``, compaction at scale); DuckDB's JSON functions do the same
work in its own engine. :func:`parse_lines_sql` gives the same rows as
:func:`cdk_ts_runtime._compaction.change_batches`: the same values, NULLs and image rests
(``tests/runtime/test_compaction_sql.py`` compares the two over generated attributes).

DuckDB functions used, all in DuckDB 1.1 (the ``duckdb>=1.1`` floor): ``json_extract`` and ``json_extract_string``
with a list of paths (one parse for all of them), ``json_keys``, ``json_type``, ``json_merge_patch`` (RFC 7396:
a ``null`` member removes the key, the others keep their order), ``regexp_full_match``, ``string_split`` and
``generate_subscripts`` (DuckDB documentation, "JSON Processing Functions", "Text Functions", "List Functions").
"""

from __future__ import annotations

import json
from collections.abc import Callable

from cdk_ts_runtime._compaction_columns import BIGINT_TEXT, ESCAPE_MARK, decimal_text
from cdk_ts_runtime._compaction_plan import ColumnSpec, CompactionSettings, Granularity

#: The line's fields, in the order of the list ``json_extract_string`` returns.
_FIELDS = (("eventID", "eventid"), ("eventName", "eventname"), ("sequenceNumber", "sequencenumber"),
           ("approximateCreationDateTime", "created"), ("keys", "keys"), ("newImage", "newimage"),
           ("oldImage", "oldimage"), ("userIdentity", "useridentity"))
#: A body's number in the high bits of a line's ``_ordinal``, the line's position in the body in the low ones (a
#: caller may hand a large object over in numbered pieces of whole lines: the order is the same).
ORDINAL_BODY_SHIFT = 32
#: Raw objects as two list parameters, the texts (VARCHAR[]) and their numbers (BIGINT[]): one row per object.
BODIES = "SELECT unnest(?::VARCHAR[]) AS body, unnest(?::BIGINT[]) AS number"


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _path(name: str, kind: str) -> str:
    """A JSON path to one kind's value of an item's attribute, exact whatever characters the name holds."""
    return _literal(f"$.{json.dumps(name, ensure_ascii=False)}.{kind}")


def _duckdb_type(spec: ColumnSpec) -> str:
    return {"string": "VARCHAR", "bigint": "BIGINT", "double": "DOUBLE", "boolean": "BOOLEAN"}.get(
        spec.type, spec.type.upper())


#: What a declared column reads of its attribute: the value text of each of these kinds.
_KINDS = {"string": ("S", "N"), "boolean": ("BOOL",)}


def column_sql(spec: ColumnSpec, text: Callable[[str], str], typed: str | None = None) -> tuple[str, str]:
    """A declared column's value and whether its attribute can leave the image (SQL).

    The SQL form of :func:`cdk_ts_runtime._compaction_columns.column_value` and its exactness test
    (``attribute_from_column`` gives the attribute back character for character), both from the text alone:
    a double's text is ``CAST(value AS VARCHAR)``, which DuckDB writes as Python's ``repr`` does; an integer's
    and a decimal's are the canonical plain form of a value that fits the column (no negative zero).

    :param spec: the column.
    :param text: the SQL giving the text of the attribute's value of one kind (``"N"``), NULL for another kind.
    :param typed: the SQL of the column's value where the exactness test runs, when already computed.
        Default: None — the value's own SQL, computed again.
    """
    number = text("N")
    if spec.type == "string":
        return f"coalesce({text('S')}, {number})", f"{text('S')} IS NOT NULL"
    if spec.type == "boolean":
        value = f"CASE {text('BOOL')} WHEN 'true' THEN true WHEN 'false' THEN false END"
        return value, f"{text('BOOL')} IN ('true', 'false')"
    if spec.type == "double":
        value = f"TRY_CAST({number} AS DOUBLE)"
        return value, f"CAST({typed or value} AS VARCHAR) = {number}"
    if spec.type == "bigint":
        value = (f"CASE WHEN regexp_full_match({number}, {_literal(BIGINT_TEXT)}) "
                 f"THEN TRY_CAST(regexp_extract({number}, '^[+-]?[0-9]+') AS BIGINT) END")
        # the value's text is the attribute's only when the attribute was written canonically
        return value, f"CAST({typed or value} AS VARCHAR) = {number}"
    precision, scale = (int(n) for n in spec.type[len("decimal("):-1].split(","))
    value = (f"CASE WHEN regexp_full_match({number}, {_literal(decimal_text(scale))}) "
             f"THEN TRY_CAST({number} AS {_duckdb_type(spec)}) END")
    if precision > scale:  # DuckDB writes a decimal with no whole digits as ".5", not "0.5"
        return value, f"CAST({typed or value} AS VARCHAR) = {number}"
    canonical = r"-?0\.[0-9]" + f"{{{scale}}}"
    exact = f"regexp_full_match({number}, {_literal(canonical)}) AND NOT regexp_full_match({number}, '-0([.]0*)?')"
    return value, exact


def parse_lines_sql(settings: CompactionSettings, bodies: str = BODIES) -> str:
    """A SELECT of every line of ``bodies`` as a row of the compacted schema, plus ``_ordinal`` (BIGINT).

    ``_ordinal`` orders the lines as the bodies and their lines came, so a caller keeps each event's first
    copy. Empty lines (a body's final newline) are skipped. Each line's JSON is parsed once, and its image
    once more for all the declared columns (an attribute is one ``{kind: value}`` pair, as the archiver
    writes it: ``typed_value``).

    :param settings: the declared columns and the granularity.
    :param bodies: a SELECT giving ``body`` (an object's text) and ``number`` (its position).
        Default: :data:`BODIES`, the texts and numbers as the statement's two parameters.
    """
    declared = settings.columns
    paths = ", ".join(_literal(f"$.{field}") for field, _name in _FIELDS)
    named = ", ".join(f"f[{n}] AS {name}" for n, (_field, name) in enumerate(_FIELDS, start=1))
    wanted: dict[str, int] = {}
    for spec in declared:
        for kind in _KINDS.get(spec.type, ("N",)):
            wanted.setdefault(_path(spec.source, kind), len(wanted) + 1)
    values, moves = [], {}
    for spec in declared:
        def text(kind: str, source: str = spec.source) -> str:
            found = wanted.get(_path(source, kind))
            return f"t[{found}]" if found else "NULL"

        value, exact = column_sql(spec, text, f'"{spec.name}"')
        values.append(f'CAST({value} AS {_duckdb_type(spec)}) AS "{spec.name}"')
        moves.setdefault(spec.source, []).append(f"coalesce({exact}, false)")
    # DuckDB's JSON writer gives the rest the text json.dumps gives it, but for escapes (ESCAPE_MARK)
    keep_whole = f"source = 'keys' OR contains(image, {_literal(ESCAPE_MARK)})"
    moving = [f"NOT ({keep_whole}) AND ({' OR '.join(tests)}) AS m{n}"
              for n, tests in enumerate(moves.values(), start=1)]
    count = " + ".join(f"m{n}::INTEGER" for n in range(1, len(moves) + 1)) or "0"
    patch = ", ".join(f"CASE WHEN m{n} THEN {_literal(json.dumps(name, ensure_ascii=False) + ':null')} END"
                      for n, name in enumerate(moves, start=1))
    hour = ", substr(created, 12, 2) AS hour" if settings.granularity is Granularity.DAY else ""
    # one merge patch (about 3 µs a row) costs less than cutting each moved member's text out of the image
    # (a replace a member, about 0.6 µs each, and building each member's text)
    rest = (f"CASE WHEN moved = 0 THEN NULL "
            f"ELSE CAST(json_merge_patch(image, '{{' || concat_ws(',', {patch or 'NULL'}) || '}}') AS VARCHAR) END")
    return f"""
WITH lines AS (
  SELECT number, unnest(string_split(body, chr(10))) AS line, generate_subscripts(string_split(body, chr(10)), 1) AS n
  FROM ({bodies}) objects),
fields AS (
  SELECT (number << {ORDINAL_BODY_SHIFT}) + n AS _ordinal, {named}
  FROM (SELECT number, n, json_extract_string(line, [{paths}]) AS f FROM lines WHERE line <> '')),
images AS (
  SELECT *, CASE WHEN newimage IS NOT NULL THEN 'new' WHEN oldimage IS NOT NULL THEN 'old' ELSE 'keys' END AS source,
    coalesce(newimage, oldimage, nullif(keys, ''), '{{}}') AS image
  FROM fields),
attributes AS (SELECT *, json_extract_string(image, [{', '.join(wanted) or "'$.none'"}]) AS t FROM images),
typed AS (SELECT *, {', '.join(values) or 'NULL AS _none'} FROM attributes),
members AS (SELECT *, {', '.join(moving) or 'NULL AS m0'} FROM typed),
rests AS (SELECT *, {rest} AS moved_rest FROM (SELECT *, {count} AS moved FROM members))
SELECT eventid, eventname, sequencenumber, CAST(created AS TIMESTAMPTZ) AS approximatecreationdatetime,
  keys,
  CASE WHEN moved > 0 AND source = 'new' THEN moved_rest ELSE newimage END AS newimage,
  CASE WHEN moved > 0 AND source = 'old' THEN moved_rest ELSE oldimage END AS oldimage,
  useridentity{''.join(f', "{spec.name}"' for spec in declared)}{hour}, _ordinal
FROM rests"""
