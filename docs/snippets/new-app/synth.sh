export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20   # on Node 20: no end-of-life banner at every synth
npx cdk synth --quiet                             # writes cdk.out/Telemetry.template.json; a cdk-nag finding fails it
.venv/bin/python -m pytest -q test_handler.py    # the handler's tests, on the local_dynamodb fixture of [testing]
.venv/bin/python -m mypy app.py handler.py test_handler.py   # strict (mypy.ini), against the wheel's annotations
