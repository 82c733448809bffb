import glob

import pandas as pd

COLUMNS = ["eventID", "eventName", "sequenceNumber", "approximateCreationDateTime", "table",
           "keys", "newImage", "oldImage", "userIdentity"]
files = sorted(glob.glob("archive/**/*.jsonl.gz", recursive=True))
frame = pd.concat(
    [pd.read_json(path, lines=True, dtype={name: "string" for name in COLUMNS})
     for path in files],
    ignore_index=True,
)
