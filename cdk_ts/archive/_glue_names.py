"""Glue database and table names as Glue stores them, and the names Glue and Athena refuse.

The rule, from AWS's own pages:

- AWS Glue ``DatabaseInput.Name`` and ``TableInput.Name``: 1 to 255 long, and "For Hive compatibility,
  this is folded to lowercase when it is stored"
  (https://docs.aws.amazon.com/glue/latest/webapi/API_DatabaseInput.html,
  https://docs.aws.amazon.com/glue/latest/webapi/API_TableInput.html). ``Archive`` and ``archive`` are
  one database to Glue.
- Athena, which reads the archive's table and view: database and table names of 1 to 255 bytes, in
  lower case ("Name databases, tables, and columns",
  https://docs.aws.amazon.com/athena/latest/ug/tables-databases-columns-names.html), and the
  underscore is the only special character it supports in database, table, view and column names
  (AWS Knowledge Center, https://aws.amazon.com/premiumsupport/knowledge-center/parse-exception-missing-eof-athena/).

So a name here is 1-255 letters, digits or ``_`` (ASCII, so characters are bytes), written into the
template and compared in lower case, the form Glue keeps.
"""

from __future__ import annotations

import re

from aws_cdk import Token

from cdk_ts._validation import Problems

#: Glue's and Athena's longest database or table name.
MAX_NAME_LENGTH = 255
#: What the archive's view adds to its table's name.
VIEW_SUFFIX = "_deduplicated"
_NAME = re.compile(r"[A-Za-z0-9_]+")
RULE = "1-255 letters, digits or '_' (Glue keeps names in lower case; Athena takes no other character)"


def glue_name(problems: Problems, parameter: str, name: str, *, longest: int = MAX_NAME_LENGTH) -> str | None:
    """``name`` as Glue stores it (lower case), or None with the reason Glue or Athena would refuse it recorded.

    :param problems: where a refusal is recorded.
    :param parameter: the parameter the name came from, for the message.
    :param name: the name as given.
    :param longest: the longest name that fits (a table leaves room for its view's suffix).
        Default: 255.
    """
    if not name:
        problems.add(f"{parameter} is empty: Glue names are {RULE}")
        return None
    if Token.is_unresolved(name):
        problems.add(f"{parameter} is a deploy-time value: pass the name itself, which the view's SQL text names")
        return None
    if not _NAME.fullmatch(name) or len(name) > longest:
        limit = "" if longest == MAX_NAME_LENGTH else f"; at most {longest} here, so '{VIEW_SUFFIX}' still fits"
        problems.add(f"{parameter} {name!r} is not a name Glue and Athena accept: {RULE}{limit}")
        return None
    return name.lower()
