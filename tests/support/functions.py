"""A Lambda function that only holds settings: what the console reads from a deployed function (never invoked)."""

from __future__ import annotations

import io
import json
import zipfile


def create_settings_function(iam, lambda_client, name: str, env: dict[str, str], *,
                             handler: str = "index.handler") -> str:
    """Create function ``name`` with environment ``env`` (and its role) through the given clients; its name."""
    role = iam.create_role(
        RoleName=f"{name}-role",
        AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}),
    )["Role"]["Arn"]
    code = io.BytesIO()
    with zipfile.ZipFile(code, "w") as archive:
        archive.writestr("index.py", "def handler(event, context):\n    return event\n")
    lambda_client.create_function(
        FunctionName=name, Runtime="python3.12", Role=role, Handler=handler,
        Code={"ZipFile": code.getvalue()}, Environment={"Variables": env},
    )
    return name
