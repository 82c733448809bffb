import json
import os

from pyiceberg.catalog import load_catalog
from pyiceberg.expressions import And, EqualTo

# The function's CDK_TS_COMPACTION_ICEBERG: the S3 Tables REST catalog's properties and the table's identifier
config = json.loads(os.environ["CDK_TS_COMPACTION_ICEBERG"])
table = load_catalog("archive", **config["catalog"]).load_table(config["identifier"])
rows = table.scan(row_filter=And(EqualTo("dt", "2026-03-01"), EqualTo("device_id", "d")),
                  selected_fields=("device_id", "sk", "v", "sequencenumber")).to_arrow()
