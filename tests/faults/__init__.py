"""Fault and adversarial-input tests: each asserts the state after the run, not only the error."""
