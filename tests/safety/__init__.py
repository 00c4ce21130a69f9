"""Fail-safe tests (issue 5): bad inputs, fuzzing, secret hygiene, idempotence, data safety."""
