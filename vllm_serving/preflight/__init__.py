"""The preflight: the new image run once on the server's GPUs and weights before it replaces the server.

`in_image` is the program itself (standard library only; `loader.py` runs it from memory as one
`python3 -c`), including the `engine` check, which asks the image's own vLLM about the server's
exact argv; `command` turns a stack into its arguments; `verdict` reads the result back. Imports
spec and below; the Docker container (components/docker/preflight.py) and the Kubernetes init
container (render/kubernetes/preflight.py) both start from here.
"""
