"""Pulumi entry point: build the deployment described by the stack config and export it."""

import pulumi

from components.program import build

for name, value in build().items():
    pulumi.export(name, value)
