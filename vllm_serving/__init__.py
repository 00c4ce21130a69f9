"""The pure core.

Settings, catalogs, vLLM facts, the resolved spec, rules, planner, renderers and the CLI; never
imports pulumi.
"""
