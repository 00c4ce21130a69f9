"""A new stack from a GPU and a model: the engine section `vllm-stack init` writes, and its YAML.

`engine_choice` picks TP, dtype, max-model-len and parsers with the compatibility rules and the
capacity planner; `stack_text` writes the stack file with a comment on each key. Sits beside
`views`: imports stack_files, rules and below, never the CLI.
"""
