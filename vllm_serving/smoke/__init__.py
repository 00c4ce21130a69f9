"""`vllm-stack smoke`: does a deployed server answer the way its stack says it should?

Pure logic plus HTTP (httpx): what to expect comes from the resolved spec (`expectations`), the
ordered checks are data (`checks`), the table and JSON views are in `report`.
"""
