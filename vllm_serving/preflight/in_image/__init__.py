"""The preflight as it runs inside the deployed image: standard library only, Python 3.9+.

Every module here is sent verbatim to the container as one `python3 -c` program
(`vllm_serving/preflight/loader.py` imports them from memory there), so nothing in this package
may import the project: torch, vLLM and pynvml are imported from the image, by name, when a check
needs them. `main` parses the options and runs the checks; `host` checks the runtime, GPUs, torch's
kernels, the weights and curl; `engine` asks the image's own vLLM (`vllm_calls`, in a child
process) whether it accepts the server's argv; `memory` compares each GPU's free memory with what
vLLM will ask for, naming what holds it (`gpu_processes`); `stack_keys` maps vLLM's words back to
the stack's keys.
"""
