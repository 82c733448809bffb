pip install "cdk-ts @ git+https://<repo-url>@v0.2.0"
