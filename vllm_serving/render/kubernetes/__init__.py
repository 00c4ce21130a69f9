"""The Kubernetes objects of a stack as plain dicts: shared parts, the workload, the assembled list."""
