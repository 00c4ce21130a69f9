"""The preflight: the new image run once on the server's GPUs and weights before it replaces the server.

`script` is the check program itself (standard library only, sent as `python3 -c`); `command`
turns a stack into its arguments; `verdict` reads the result back. Imports spec and below; the
Docker container (components/docker/preflight.py) and the Kubernetes init container
(render/kubernetes/preflight.py) both start from here.
"""
