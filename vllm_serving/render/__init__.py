"""The deployment as each backend's plain data (Docker container, docker run, Compose, Kubernetes objects).

Imports observability, spec and below.
"""
