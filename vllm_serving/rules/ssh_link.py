"""The ssh link to a Docker host (`target.dockerHost: ssh://...`): the registry password and the
API key travel over it, as the Docker API calls that create the container.

`target.sshOpts` passes only options from an allow-list (settings/ssh_options.py); two of them are
allowed because people need them on first contact, yet turn off what makes the link safe: ssh's
check of the host's key. With it off, whoever answers on the host's address (a spoofed DNS name, a
moved IP) receives the calls, the secrets in them, and runs the container.
"""

from __future__ import annotations

from vllm_serving.findings import Severity, config_key
from vllm_serving.rules.base import Context, Facts, Rule
from vllm_serving.settings.ssh_options import unchecked_host_key

SSH_OPTS = config_key("target", "sshOpts")


def _host_key_unchecked(ctx: Context) -> Facts | None:
    target = ctx.settings.target
    if target.kind != "docker" or target.docker_hostname is None:
        return None  # no ssh: a local socket
    found = unchecked_host_key(target.ssh_opts)
    return {"options": ", ".join(text for _, text in found)} if found else None


RULES: tuple[Rule, ...] = (
    Rule("ssh-host-key-unchecked", Severity.WARNING, SSH_OPTS,
         "sshOpts turn off ssh's check of the Docker host's key ({options}): whoever answers on its address "
         "gets the Docker API calls, with the registry password and the API key in them",
         "add the host's key to known_hosts (ssh-keyscan -H HOST >> ~/.ssh/known_hosts, then compare its "
         "fingerprint with ssh-keygen -lf on the host) and remove {options} from target.sshOpts, so ssh keeps "
         "checking it",
         "An ssh:// Docker host whose sshOpts set StrictHostKeyChecking=no or UserKnownHostsFile=/dev/null.",
         "A spoofed or moved address takes the deployment's secrets and runs its container, without a warning.",
         "ssh_config(5) StrictHostKeyChecking, UserKnownHostsFile; docker/cli cli/connhelper/connhelper.go "
         "(the Docker API over ssh); vllm_serving/settings/ssh_options.py", _host_key_unchecked),
)
