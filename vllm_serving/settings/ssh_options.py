"""ssh options for a Docker host reached over ssh://: an allow-list, read as OpenSSH reads it.

The Docker provider reaches an `ssh://` host by running the local `ssh` client with these items
placed before its own `-l USER -p PORT -- HOST docker system dial-stdio` (docker/cli
cli/connhelper/connhelper.go, getConnectionHelper). ssh parses them with
`getopt("...B:D:E:F:I:J:L:O:P:Q:R:S:W:b:c:e:i:l:m:o:p:w:")` and restarts option parsing after the
first operand (openssh-portable ssh.c, main), so nearly anything can hide in one item: combined
flags (`-CoProxyCommand=...`), `-F` (a whole config file), `-E`/`-S` (files it writes), `-J`/
`ProxyJump` (an implicit ProxyCommand run through the shell: ssh.c builds it with the jump hosts
pasted in unquoted), a bare word (ssh takes it as the host: the Docker API and the registry
password go there). `-o KEYWORD VALUE` goes through readconf.c's process_config_line: the keyword
is matched in lower case (`lowercase(keyword)`, parse_token), split at white space or one `=`, with
quotes removed (misc.c strdelim, argv_split).

So this is an allow-list, not a deny-list: an item is accepted only whole, as one option of the
form `-oKeyword=Value`, `-o Keyword=Value` or `-o Keyword Value` (the form docker/cli adds itself:
`-o ConnectTimeout=30`), or as the pair `-o`, `Keyword=Value` that getopt reads as one, with a
keyword from `ALLOWED` in any case and a value of plain characters that the keyword's own check
accepts. In that narrow form OpenSSH's reading and this one agree character for character (no
quotes, backslashes, `#` or white space in the value). Everything else is refused with the
keyword and the list. The host is `dockerHost`: `Hostname` is refused, and a `User` or `Port`
that contradicts dockerHost is refused (ssh keeps the first value it reads, and these come first).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec

from vllm_serving.settings.base import fix_error
from vllm_serving.settings.shown import shown
from vllm_serving.settings.text_checks import HOSTNAME

# One whole option; the value has no white space, quote, backslash, '#' or '=' (OpenSSH strips
# or splits at those, so a value holding one would read differently there than here).
SETTING = re.compile(r" *(?P<key>[A-Za-z0-9]+)(?: *= *| +)(?P<value>[A-Za-z0-9_.,:@%/~+\[\]-]+)")
"""`Keyword=Value` as the argument of -o: in the same item (`-oKeyword=Value`, `-o Keyword=Value`)
or, after an item that is exactly `-o`, the next one (getopt takes it as the argument)."""
_USER = r"[A-Za-z0-9_][A-Za-z0-9._-]{0,31}"
_HOST = rf"(?:{HOSTNAME.pattern}|\[[0-9A-Fa-f:.]+\])"
_PORT = r"(?:6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3})"
JUMP = re.compile(rf"(?:{_USER}@)?{_HOST}(?::{_PORT})?")
"""One ProxyJump hop, `[user@]host[:port]`: nothing a shell would read."""
MAX_JUMPS = 8
_PATH = re.compile(r"(?:/|~/|%d/)[A-Za-z0-9_.,@%/~+-]*")
_TIME = re.compile(r"[1-9]\d{0,4}[sSmMhH]?|0")
_COUNT = re.compile(r"[1-9]\d{0,2}")


class Allowed(msgspec.Struct, frozen=True):
    name: str
    """The keyword as ssh_config(5) spells it."""
    check: Callable[[str], bool]
    """Whether OpenSSH would take the value, and it is one this project allows."""
    values: str
    """What the value may be, for the fix."""


def _one_of(*choices: str) -> Callable[[str], bool]:
    return lambda value: value.lower() in choices


def _matching(pattern: re.Pattern[str] | str) -> Callable[[str], bool]:
    return lambda value: re.fullmatch(pattern, value) is not None


def _jumps(value: str) -> bool:
    # ssh_config's `none` (no jump) is a host name's form too, so it passes as one hop
    hops = value.split(",")
    return len(hops) <= MAX_JUMPS and all(JUMP.fullmatch(h) for h in hops)


ALLOWED: dict[str, Allowed] = {a.name.lower(): a for a in (
    Allowed("Port", _matching(_PORT), "a port number (1-65535)"),
    Allowed("User", _matching(_USER), "a user name"),
    Allowed("IdentityFile", _matching(_PATH), "a key file's path (/..., ~/...)"),
    Allowed("IdentitiesOnly", _one_of("yes", "no"), "yes or no"),
    Allowed("StrictHostKeyChecking", _one_of("yes", "accept-new", "no"), "yes, accept-new or no"),
    Allowed("UserKnownHostsFile", _matching(_PATH), "one known_hosts file's path"),
    Allowed("ConnectTimeout", _matching(_TIME), "seconds, e.g. 30 or 1m"),
    Allowed("ConnectionAttempts", _matching(_COUNT), "a count, e.g. 3"),
    Allowed("ServerAliveInterval", _matching(_TIME), "seconds, e.g. 30"),
    Allowed("ServerAliveCountMax", _matching(_COUNT), "a count, e.g. 3"),
    Allowed("TCPKeepAlive", _one_of("yes", "no"), "yes or no"),
    Allowed("BatchMode", _one_of("yes", "no"), "yes or no"),
    Allowed("ProxyJump", _jumps, f"[user@]host[:port], up to {MAX_JUMPS} separated by ','"),
)}
ALLOWED_TEXT = ", ".join(a.name for a in ALLOWED.values())
# Why some keywords and flags people meet are off the list, for the message (any other is refused too).
_RUNS = "whoever edits the stack file would run code with the deployer's credentials (the Pulumi passphrase " \
        "and backend, the registry password)"
WHY_NOT: dict[str, str] = {
    "proxycommand": f"runs its command on the machine running pulumi: {_RUNS}",
    "localcommand": f"runs its command on the machine running pulumi once connected: {_RUNS}",
    "permitlocalcommand": f"turns on LocalCommand, a command on the machine running pulumi: {_RUNS}",
    "knownhostscommand": f"runs its command on the machine running pulumi: {_RUNS}",
    "match": f"can run a command (Match exec) on the machine running pulumi: {_RUNS}",
    "pkcs11provider": f"loads a shared library into ssh on the machine running pulumi: {_RUNS}",
    "securitykeyprovider": f"loads a shared library into ssh on the machine running pulumi: {_RUNS}",
    "include": "reads further options from a file no check sees",
    "remotecommand": "runs another command on the host than the Docker API's",
    "forwardagent": "hands the host the deployer's ssh agent, to log in elsewhere as them",
    "sendenv": "sends the deployer's environment (credentials among it) to the host",
    "setenv": "sets variables for the command on the host",
    "controlpath": "shares the connection through a socket another process can use",
    "controlmaster": "shares the connection through a socket another process can use",
    "localforward": "opens a tunnel on the machine running pulumi",
    "remoteforward": "opens a tunnel from the host back to the machine running pulumi",
    "dynamicforward": "opens a SOCKS proxy on the machine running pulumi",
}
FLAG_WHY_NOT: dict[str, str] = {
    "-F": "reads a config file whose options no check sees",
    "-I": f"loads a PKCS#11 library into ssh on the machine running pulumi: {_RUNS}",
    "-E": "appends ssh's log to a file it names",
    "-S": "shares the connection through a socket another process can use",
    "-W": "forwards the connection to another host than dockerHost",
    "-A": "hands the host the deployer's ssh agent, to log in elsewhere as them",
    "-L": "opens a tunnel on the machine running pulumi", "-R": "opens a tunnel back to the machine running pulumi",
    "-D": "opens a SOCKS proxy on the machine running pulumi", "-M": "makes this ssh a connection-sharing master",
}
# ssh.c main: getopt(ac, av, "1246ACGKMNTVXYZafgknqstvxy" "B:D:E:F:I:J:L:O:P:Q:R:S:W:b:c:e:i:l:m:o:p:w:")
TAKES_ARGUMENT = frozenset("BDEFIJLOPQRSWbceilmopw")
# Flags people reach for, and the -o form that says the same.
_FLAG_FORMS = {"-p": "Port", "-l": "User", "-i": "IdentityFile", "-J": "ProxyJump"}
_ONE_ITEM = "write each option as -o Keyword=Value"
# The keyword of an -o item as ssh would find it: after white space, '=' or a quote.
_LOOSE_KEYWORD = re.compile(r"-o[\s=\"']*([A-Za-z0-9]+)")


class Refusal(msgspec.Struct, frozen=True):
    index: int
    message: str
    fix: str


def _flag_of(item: str) -> tuple[str, str | None] | None:
    """getopt's reading of an item that starts with '-': the first flag taking an argument and the
    argument (None: it is the next item), or the first flag when none takes one; None for a word."""
    if not item.startswith("-") or item in ("-", "--"):
        return None
    for position, char in enumerate(item[1:], 1):
        if char in TAKES_ARGUMENT:
            return f"-{char}", item[position + 1:] or None
    return f"-{item[1]}", ""


def _refuse_unread(item: str, following: str) -> tuple[str, str]:
    """(message, fix) for an item (or -o pair) not of the accepted form: by the option ssh would
    read from it (its keyword, in any case or quotes; its flag, combined or not)."""
    quoted = repr(shown(item))
    read = _flag_of(item)
    if read is None:
        return (f"{quoted} is not an option: ssh would take a bare word as the host to connect to, and send "
                "the Docker API calls and the registry password there",
                f"remove it: the host is target.dockerHost; {_ONE_ITEM}")
    flag, argument = read
    argument = following if argument is None else argument
    combined = "" if item.startswith(flag) else f"{quoted} combines flags, and ssh reads {flag} in it: "
    if flag == "-o":
        keyword = _LOOSE_KEYWORD.match(f"-o{argument}")
        allowed = ALLOWED.get(keyword.group(1).lower()) if keyword else None
        if keyword is not None and allowed is None:
            message, fix = _refused_keyword(keyword.group(1))
            return combined + message, fix
        if allowed is not None and not combined:
            return (f"{quoted} does not give {allowed.name} {allowed.values} in plain characters (ssh reads "
                    "quotes, spaces, '#' and ';' in a value differently, or hands it to a shell)",
                    f"write it as -o {allowed.name}=VALUE, VALUE {allowed.values}")
    if flag in _FLAG_FORMS and not combined:
        return (f"{quoted} is ssh's {flag} flag: only -o options are passed",
                f"write it as '-o {_FLAG_FORMS[flag]}={shown(argument or 'VALUE')}'")
    does = FLAG_WHY_NOT.get(flag, "is not passed: only -o options from the list are")
    return (f"{combined or quoted + ' is '}ssh's {flag} flag, which {does}",
            f"{_ONE_ITEM}, one per item, with a keyword of: {ALLOWED_TEXT}; keep other settings in the "
            "deployer's own ~/.ssh/config")


def _refused_keyword(key: str) -> tuple[str, str]:
    """(message, fix) for a keyword off the list."""
    if key.lower() == "hostname":
        return ("Hostname would send the Docker API calls (with the registry password and the API key) to "
                "another host than dockerHost, which is what a review reads",
                "remove it: the host is target.dockerHost (ssh://user@host[:port])")
    does = WHY_NOT.get(key.lower(), "is not one this project passes to ssh")
    return (f"the ssh option {key[:40]} {does}", f"remove it; only these are passed: {ALLOWED_TEXT} (keep "
            "other settings in the deployer's own ~/.ssh/config)")


def _check_option(key: str, value: str) -> tuple[str, str] | None:
    """(message, fix) when the keyword or its value is not allowed."""
    allowed = ALLOWED.get(key.lower())
    if allowed is None:
        return _refused_keyword(key)
    if not allowed.check(value):
        return (f"{allowed.name}={shown(value)} is not a value this project passes to ssh",
                f"give {allowed.name} {allowed.values}")
    return None


def _against_endpoint(key: str, value: str, user: str | None, port: str | None) -> tuple[str, str] | None:
    """A User or Port that differs from dockerHost's: ssh keeps the first, which is this one."""
    given = {"user": user, "port": port}.get(key.lower())
    if given is not None and value != given:
        name = ALLOWED[key.lower()].name
        return (f"{name}={value} overrides dockerHost's {name.lower()} {given}: ssh keeps the first value it "
                "reads, and sshOpts come first", f"remove {name} from sshOpts, or put {value} in dockerHost")
    return None


def refusals(options: tuple[str, ...], user: str | None = None, port: str | None = None) -> list[Refusal]:
    """Each item that is not (part of) one allowed option, in order, at most one refusal per
    option; `user`/`port` are dockerHost's, when it gives them. A refused pair is named by the
    index of its `-o` (the first of the two)."""
    found: list[Refusal] = []
    index = 0
    while index < len(options):
        item, start = options[index], index
        setting = item[2:] if item.startswith("-o") else None
        if item == "-o":  # the pair: getopt's argument is the next item
            if index + 1 == len(options):
                found.append(Refusal(index, "'-o' is the last item: ssh would take the next word of its command "
                                     "line, one Docker adds, as the option", f"{_ONE_ITEM}, or remove it"))
                break
            index += 1
            setting = options[index]
        match = SETTING.fullmatch(setting) if setting is not None else None
        if match is None:
            following = options[index + 1] if index + 1 < len(options) else ""
            found.append(Refusal(start, *_refuse_unread(item if start == index else f"-o {setting}", following)))
            read = _flag_of(item) if start == index else None
            if read is not None and read[1] is None:
                index += 1  # getopt takes the next item as this flag's argument: one refusal for both
        else:
            key, value = match.group("key"), match.group("value")
            problem = _check_option(key, value) or _against_endpoint(key, value, user, port)
            if problem is not None:
                found.append(Refusal(start, *problem))
        index += 1
    return found


def refuse_unlisted(options: tuple[str, ...] | None, docker_host: str | None = None,
                    field: str = "sshOpts") -> None:
    """An error naming the first refused item (`sshOpts[1]`) and the fix."""
    user, port = _endpoint_parts(docker_host)
    found = refusals(options or (), user, port)
    if found:
        first = found[0]
        raise fix_error(first.message, first.fix, field=f"{field}[{first.index}]")


def _endpoint_parts(docker_host: str | None) -> tuple[str | None, str | None]:
    """(user, port) of an ssh:// endpoint, each None when it gives none."""
    if docker_host is None:
        return None, None
    match = re.fullmatch(r"ssh://(?:([^@/]+)@)?(?:\[[^\]]+\]|[^:/]+)(?::(\d+))?/?", docker_host)
    return (match.group(1), match.group(2)) if match else (None, None)


# Values of allowed keywords that turn off the check of the host's key (ssh_config(5)): `no`
# connects to a host whose key changed; a known_hosts of /dev/null forgets every key, so each
# connection meets the host as new (accepted under accept-new or no, refused in BatchMode).
UNCHECKED_HOST_KEY: dict[str, frozenset[str]] = {
    "stricthostkeychecking": frozenset({"no"}),
    "userknownhostsfile": frozenset({"/dev/null"}),
}


def unchecked_host_key(options: tuple[str, ...]) -> list[tuple[int, str]]:
    """(index, `Keyword=Value`) of each option of an accepted list that turns off host-key
    checking; a pair is named by the index of its `-o`."""
    found = []
    for index, item in enumerate(options):
        paired = options[index - 1:index] == ("-o",)
        # an accepted list holds `-oKeyword=Value` or the pair `-o`, `Keyword=Value`
        match = SETTING.fullmatch(item.removeprefix("-o"))
        if match and match.group("value").lower() in UNCHECKED_HOST_KEY.get(match.group("key").lower(), ()):
            found.append((index - paired, f"{ALLOWED[match.group('key').lower()].name}={match.group('value')}"))
    return found
