"""What vLLM itself is.

The image's defaults, the modelled flag table, parser and env names, release facts; imports only the
base modules.
"""
