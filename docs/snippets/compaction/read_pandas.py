import glob
import json

import pandas as pd

files = sorted(key for manifest in glob.glob("parquet/dynamodb/_manifests/**/*.json", recursive=True)
               for key in json.load(open(manifest))["files"])
frame = pd.concat([pd.read_parquet(path, columns=["device_id", "sk", "v", "sequencenumber"]) for path in files],
                  ignore_index=True)  # sequencenumber stays text: every digit
