import glob

import pyarrow as pa
import pyarrow.json as pj

COLUMNS = ["eventID", "eventName", "sequenceNumber", "approximateCreationDateTime", "table",
           "keys", "newImage", "oldImage", "userIdentity"]
schema = pa.schema([(name, pa.string()) for name in COLUMNS])
files = sorted(glob.glob("archive/**/*.jsonl.gz", recursive=True))
archive = pa.concat_tables(
    [pj.read_json(path, parse_options=pj.ParseOptions(explicit_schema=schema)) for path in files]
)
