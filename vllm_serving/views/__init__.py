"""Offline answers built from resolved stacks: plan, diff, affected stacks; imports stack_files and below."""
