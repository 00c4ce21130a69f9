"""The preflight on a Docker host: the new image run once on the server's GPUs and weights, before cut-over.

A one-shot `docker.Container` (`attach`: the provider waits for it to exit and records its exit code
and output) that runs `vllm_serving.preflight`'s program, with the server's own argv (after `--`,
byte for byte) and plain environment, so the image's vLLM judges exactly what the server will run.
The server's image passes through it (`server_image`), so the server is registered only after the
preflight passed: a failure stops `pulumi up` with what failed (vLLM's own words for the `engine`
check) and the fix, before the running server is touched.

Replacement is create-first, overriding the provider's delete-first default for containers: with
delete-first, Pulumi would delete the dependent server before the new preflight ran. The container
is auto-named, so old and new never clash. Its inputs are the image, the GPUs, the weights and the
server's argv and plain environment, so it runs again when one of them changes (or on
`pulumi up --replace`), and never for a port, a restart policy or a log option. It has the server's
network but no port. The server's secrets (API key, Hugging Face token) are not given to it: a
Hub repository that needs the token is reported as not checked, never as vLLM's refusal.

What the provider does with it (terraform-provider-docker v4.5.0, the one pulumi-docker bundles,
internal/provider/resource_docker_container_funcs.go; docs/provider-behaviour.md): create waits
for the exit and ignores its status, so a failed check is reported by `_checked` below, never by the
provider; `exit_code` is read back by every Read, `container_logs` is set by create alone. The exited
container stays (no `rm`: create ends with a Read, which would find it gone) until Pulumi deletes
it after its replacement succeeded, or on destroy: one per host.

Where the memory check found a GPU short while the server being replaced still holds memory, it
leaves its readings; `_checked` asks Docker for that server's host PIDs (server_processes.py) and
judges them again with exactly its processes' memory released (vllm_serving/preflight/server_memory.py).
"""

from __future__ import annotations

import msgspec
import pulumi
import pulumi_docker as docker

from components.docker.server_processes import server_pids
from components.docker.vllm_server import device_requests, gpus
from vllm_serving.preflight.command import TIMEOUT_SECONDS, PreflightCommand
from vllm_serving.preflight.server_memory import attributed
from vllm_serving.preflight.verdict import failure_message, read_verdict
from vllm_serving.render.docker_container import ContainerSpec
from vllm_serving.timing import whole_minutes

ROLE_LABEL = ("vllm-serving.role", "preflight")


class Preflight(pulumi.ComponentResource):
    """One run of the preflight script in the new image; `server_image` holds the server back until it passed."""

    container: docker.Container
    image: pulumi.Output[str]
    passed_image: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        command: PreflightCommand,
        server: ContainerSpec,
        image: pulumi.Input[str],
        weights: docker.ContainerVolumeArgs,
        opts: pulumi.ResourceOptions | None = None,
        docker_host: str | None = None,
        ssh_opts: tuple[str, ...] = (),
    ) -> None:
        super().__init__("vllm-serving:docker:Preflight", name, None, opts)
        stack = dict(server.labels).get("vllm-serving.stack", "")
        command = command.for_server(server.command, server.env)
        self.container = docker.Container(
            name,
            image=image,
            entrypoints=list(command.entrypoint),
            command=list(command.args),
            envs=[f"{k}={v}" for k, v in command.env] or None,
            gpus=gpus(server),
            device_requests=device_requests(server),
            runtime=server.runtime,
            volumes=[weights],  # the weights only, read-only like the server's
            # the server's network (Docker's default bridge): vLLM's config reads the Hub where the argv
            # names a repository (a speculative draft, a remote config); without it the preflight would
            # refuse what the server starts
            network_mode="bridge",
            # never `must_run`: Read flips it for a stopped container and Update then starts it again
            must_run=False,
            attach=True,
            logs=True,
            restart="no",
            # the provider reads the output back through the logs API: a driver it can read
            log_driver="json-file",
            labels=[docker.ContainerLabelArgs(label=k, value=v)
                    for k, v in (("vllm-serving.stack", stack), ROLE_LABEL)],
            opts=pulumi.ResourceOptions(
                parent=self,
                # create-first: the provider's delete-first would delete the dependent server first
                delete_before_replace=False,
                custom_timeouts=pulumi.CustomTimeouts(create=whole_minutes(TIMEOUT_SECONDS)),
            ),
        )
        c = self.container
        self.image = pulumi.Output.from_input(image)
        outgoing = Outgoing(server.name, docker_host, ssh_opts)
        self.passed_image = pulumi.Output.all(self.image, c.exit_code, c.container_logs, c.urn).apply(
            lambda found: _checked(found, outgoing))
        # a failed preflight whose result is known fails a preview too, through this output
        self.register_outputs({"exitCode": c.exit_code, "passedImage": self.passed_image})

    def server_image(self) -> pulumi.Output[str]:
        """The image for the server: once the preflight passed, so the server waits for it.

        A preview gets the image as is: a preflight about to run has no result yet, and an unknown
        image would show the server replaced when nothing else of it changes.
        """
        return self.image if pulumi.runtime.is_dry_run() else self.passed_image


class Outgoing(msgspec.Struct, frozen=True):
    """The server this preflight gates, where Docker can list its processes."""

    name: str
    docker_host: str | None = None
    ssh_opts: tuple[str, ...] = ()


def _checked(args: list[object], outgoing: Outgoing | None = None) -> str:
    """The image, when the preflight's exit code and output say it passed; else stop with what failed."""
    image, exit_code, output, urn = args
    code = int(exit_code) if isinstance(exit_code, (int, float)) else None  # numbers cross the wire as doubles
    verdict = read_verdict(code, output if isinstance(output, str) else None)
    if verdict.readings is not None and outgoing is not None:
        pids = server_pids(outgoing.docker_host, outgoing.ssh_opts, outgoing.name)
        if isinstance(pids, frozenset):
            verdict = attributed(verdict, pids)
        else:
            pulumi.log.warn(f"memory check: {pids}; the preflight's own reading of which process is the "
                            "server being replaced stands")
    if not verdict.passed:
        rerun = f"pulumi up --replace '{urn}'"
        raise pulumi.RunError(failure_message("on the Docker host", verdict, code, rerun))
    return str(image)
