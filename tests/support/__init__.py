"""Helpers shared by the test suites (local servers, request counting, fault injection)."""
