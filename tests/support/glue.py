"""Reading the Glue catalog entries of a synthesized template: Athena's Presto view JSON."""

from __future__ import annotations

import base64
import json


def presto_view(table_input):
    """The Presto view JSON Athena keeps in ViewOriginalText."""
    text = table_input["ViewOriginalText"]
    assert text.startswith("/* Presto View: ") and text.endswith(" */")
    return json.loads(base64.b64decode(text[len("/* Presto View: "):-len(" */")]))
