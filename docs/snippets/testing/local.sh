cdk-ts local                              # prints the endpoint, `export AWS_ENDPOINT_URL=...` and the rules in force
cdk-ts local --json --port 8000 --guesses --disable tag_lag --set write_units_per_second=10
