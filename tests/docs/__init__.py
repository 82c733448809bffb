"""Tests of the documentation: the generated API reference and the docstrings of the public surface."""
