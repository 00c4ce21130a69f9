"""Mutation testing per package (`make mutation PACKAGE=...`); see docs/testing.md."""
