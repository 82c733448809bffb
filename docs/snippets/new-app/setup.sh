python -m pip install build                       # the wheel builder
python -m build --wheel cdk-ts                    # writes cdk-ts/dist/cdk_ts-0.3.0-py3-none-any.whl
mkdir telemetry-app && cd telemetry-app
npm init -y > /dev/null
npm install --save-exact aws-cdk@2.1148.1         # the CDK CLI, pinned to the 2.x line (3.x cannot read 2.x apps)
python -m venv .venv
.venv/bin/pip install "../cdk-ts/dist/cdk_ts-0.3.0-py3-none-any.whl[nag,testing]" mypy   # see below
mkdir -p src/ingest
printf 'def handler(event, context):\n    return {}\n' > src/ingest/handler.py
cat > cdk.json <<'JSON'
{
  "app": ".venv/bin/python app.py",
  "context": {"@aws-cdk/aws-s3:serverAccessLogsUseBucketPolicy": true}
}
JSON
cat > mypy.ini <<'INI'
[mypy]
strict = True

[mypy-boto3,boto3.*,botocore,botocore.*]
ignore_missing_imports = True
INI
