"""The Pulumi program and its ComponentResources (docker/, kubernetes/).

Thin wrappers that turn a resolved spec into provider resources.
"""
