import duckdb

rows = duckdb.sql("""
    SELECT sequenceNumber, eventName, "table", dt, hour, keys, newImage, oldImage
    FROM read_json('archive/**/*.jsonl.gz', format = 'newline_delimited', hive_partitioning = true,
                   hive_types = {'table': 'VARCHAR', 'dt': 'VARCHAR', 'hour': 'VARCHAR'},
                   columns = {eventID: 'VARCHAR', eventName: 'VARCHAR', sequenceNumber: 'VARCHAR',
                              approximateCreationDateTime: 'VARCHAR', keys: 'VARCHAR', newImage: 'VARCHAR',
                              oldImage: 'VARCHAR', userIdentity: 'VARCHAR'})
    ORDER BY length(sequenceNumber), sequenceNumber
""").fetchall()
