"""The KV-cache capacity planner: memory per GPU, tokens and concurrency; imports spec and below."""
