python -m build --wheel                                   # writes dist/cdk_ts-0.3.0-py3-none-any.whl
pip install dist/cdk_ts-0.3.0-py3-none-any.whl
