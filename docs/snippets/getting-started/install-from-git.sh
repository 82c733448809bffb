pip install "cdk-ts @ git+https://<repo-url>@<commit>"   # or @v0.3.0 once 0.3 is tagged
