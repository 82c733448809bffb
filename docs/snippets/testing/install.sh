pip install "dist/cdk_ts-0.3.0-py3-none-any.whl[testing]"   # the wheel built in a clone: moto_server and pytest come with [testing]
