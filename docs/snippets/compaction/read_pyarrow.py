import glob
import json

import pyarrow.dataset as ds

files = sorted(key for manifest in glob.glob("parquet/dynamodb/_manifests/**/*.json", recursive=True)
               for key in json.load(open(manifest))["files"])
dataset = ds.dataset(files, format="parquet", partitioning="hive", partition_base_dir="parquet/dynamodb")
table = dataset.to_table(columns=["device_id", "sk", "v", "sequencenumber", "dt"], filter=ds.field("v") == 2)
