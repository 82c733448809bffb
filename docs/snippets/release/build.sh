.venv/bin/python -m build --outdir dist .            # dist/cdk_ts-X.Y.Z.tar.gz, then the wheel built from it
.venv/bin/python -m twine check --strict dist/*     # warnings fail too: metadata, the README as description
