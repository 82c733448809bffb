"""Benchmarks: run each as `python -m bench.<name>` from the repository root; results in bench/README.md."""
