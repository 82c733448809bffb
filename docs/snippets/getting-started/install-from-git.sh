pip install "cdk-ts[testing] @ git+<repository-url>@v0.3.0"   # the release tag; [testing]: the local DynamoDB and pytest
