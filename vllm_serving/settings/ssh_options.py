"""ssh options for a Docker host reached over ssh://: none may run a command where Pulumi runs.

The Docker provider reaches an `ssh://` host by running the local `ssh` client with these
options (docker/cli's connhelper). Some execute a command, or load a library, on that machine -
the operator's workstation or the CI runner that holds the Pulumi passphrase and the backend
credentials - before the host is reached. A stack file is reviewed as settings, not as code, so
such an option is refused while the settings load (render and diff included).
"""

from __future__ import annotations

import re

from vllm_serving.settings.base import fix_error

# ssh_config(5) keywords (case-insensitive) -> what they do on the local machine.
LOCAL_EXECUTION: dict[str, str] = {
    "proxycommand": "runs its command on the machine running pulumi",
    "localcommand": "runs its command on the machine running pulumi once connected",
    "permitlocalcommand": "turns on LocalCommand, a command on the machine running pulumi",
    "knownhostscommand": "runs its command on the machine running pulumi",
    "match": "can run a command (Match exec) on the machine running pulumi",
    "pkcs11provider": "loads a shared library into ssh on the machine running pulumi",
    "securitykeyprovider": "loads a shared library into ssh on the machine running pulumi",
    "include": "reads further options from a file no check sees",
}
# ssh(1) flags that do the same as a keyword: -F a whole config file, -I a PKCS#11 library.
LOCAL_EXECUTION_FLAGS: dict[str, str] = {
    "-F": "reads a config file whose options no check sees",
    "-I": "loads a PKCS#11 library into ssh on the machine running pulumi",
}
_KEYWORD = re.compile(r"\s*([A-Za-z0-9]+)")


def risky_options(options: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """(index, option, what it does) for each item that runs or loads something locally; for
    `-o KEYWORD=...` in two items, the index of the keyword's item."""
    found: list[tuple[int, str, str]] = []
    index = 0
    while index < len(options):
        item = options[index].strip()
        if item.startswith("-o"):
            setting = item[2:]
            if not setting.strip() and index + 1 < len(options):
                index += 1
                setting = options[index]
            keyword = _KEYWORD.match(setting)
            name = keyword.group(1) if keyword else ""
            if name.lower() in LOCAL_EXECUTION:
                found.append((index, name, LOCAL_EXECUTION[name.lower()]))
        elif item[:2] in LOCAL_EXECUTION_FLAGS:
            found.append((index, item[:2], LOCAL_EXECUTION_FLAGS[item[:2]]))
        index += 1
    return found


def refuse_local_execution(options: tuple[str, ...] | None, field: str = "sshOpts") -> None:
    """An error naming the first such item (`sshOpts[1]`) and the fix."""
    risky = risky_options(options or ())
    if risky:
        index, option, does = risky[0]
        raise fix_error(
            f"the ssh option {option} {does}: whoever edits the stack file would run code with the deployer's "
            "credentials (the Pulumi passphrase and backend, the registry password)",
            "remove it; reach the host with ssh://user@host (a jump host with -J bastion), and keep other ssh "
            "settings in the deployer's own ~/.ssh/config", field=f"{field}[{index}]")
