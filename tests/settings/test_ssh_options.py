"""sshOpts by allow-list: only `-o Keyword=Value` options from a short list pass, read as OpenSSH
reads them (tests/settings/openssh_argv.py models ssh.c and readconf.c); everything else is
refused with the keyword and the list, naming the item."""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.settings.openssh_argv import KEYWORDS, TAKES_ARGUMENT, read_argv
from vllm_serving.findings import ConfigError
from vllm_serving.settings.ssh_options import ALLOWED, JUMP, refusals, unchecked_host_key
from vllm_serving.settings.stack_config import parse_stack_config

BASE: dict[str, Any] = {
    "vllm-serving:hardware": {"gpu": "A100-80GB", "count": 2},
    "vllm-serving:image": {"tag": "v0.19.1"},
    "vllm-serving:model": {"name": "Qwen3.5-27B", "hostPath": "/models/qwen"},
}
SSH = "ssh://deploy@gpu01.internal"


def _findings(target: dict[str, Any]) -> dict[str, str]:
    try:
        parse_stack_config({**BASE, "vllm-serving:target": target})
    except ConfigError as exc:
        return {f.key: f"{f.message} - {f.fix}" for f in exc.findings}
    return {}


@pytest.mark.parametrize(("options", "index", "says"), [
    (["-o", "ProxyCommand=nc %h %p"], 0, "runs its command on the machine running pulumi"),
    (["-oLocalCommand=id"], 0, "runs its command"),
    (["-o", "proxycommand = sh -c x"], 0, "runs its command"),  # any case, '=' with spaces
    (["-o ProxyCommand nc %h %p"], 0, "runs its command"),  # flag and value in one item
    (['-o "ProxyCommand" nc'], 0, "runs its command"),  # quotes: ssh strips them
    (["-o=ProxyCommand=x"], 0, "runs its command"),  # ssh skips one leading '='
    (["-CoProxyCommand=x"], 0, "combines flags"),  # -C, then -o with the rest
    (["-Tvo", "ProxyCommand=x"], 0, "runs its command"),
    (["-p", "2222", "-F", "/tmp/ssh_config"], 0, "-o Port=2222"),  # the -o form is the fix
    (["-F", "/tmp/ssh_config"], 0, "config file whose options no check sees"),
    (["-I", "/usr/lib/opensc-pkcs11.so"], 0, "PKCS#11"),
    (["-o", 'Match exec "id"'], 0, "Match exec"),
    (["-oInclude=/tmp/x"], 0, "no check sees"),
    (["-oKnownHostsCommand=/bin/id"], 0, "runs its command"),
    (["-oPort=22", "-o"], 1, "last item"),  # ssh would take Docker's next word as the option
    (["-J", "bastion.internal"], 0, "-o ProxyJump=bastion.internal"),
    (["-oProxyJump=bastion;id"], 0, "ProxyJump"),  # pasted into a shell line by ssh.c
    (["-oProxyJump=-oProxyCommand=x"], 0, "ProxyJump"),
    (["-oProxyJump=ssh://bastion"], 0, "ProxyJump"),
    (["-o", "Hostname=evil.example"], 0, "the host is target.dockerHost"),
    (["-oHOSTNAME=evil.example"], 0, "Hostname"),
    (["evil.example"], 0, "bare word as the host"),
    (["-W", "evil:22"], 0, "another host"),
    (["-E", "/home/deploy/.bashrc"], 0, "log"),
    (["-S", "/tmp/ctl"], 0, "socket"),
    (["-L", "8080:localhost:80"], 0, "tunnel"),
    (["-D", "1080"], 0, "SOCKS"),
    (["-R", "9000:localhost:22"], 0, "tunnel"),
    (["-A"], 0, "agent"),
    (["-o", "ForwardAgent=yes"], 0, "agent"),
    (["-o", "SendEnv=PULUMI_*"], 0, "environment"),
    (["-o", "User=root"], 0, "overrides dockerHost's user deploy"),  # ssh keeps the first User
    (["-o", "StrictHostKeyChecking=maybe"], 0, "yes, accept-new or no"),
    (["-o", "Port=99999"], 0, "1-65535"),
    (["-o", "IdentityFile=$HOME/.ssh/id"], 0, "IdentityFile"),
])
def test_options_off_the_list_are_refused_at_their_item(options: list[str], index: int, says: str) -> None:
    found = _findings({"dockerHost": SSH, "sshOpts": options})
    key = f"vllm-serving:target.sshOpts[{index}]"
    assert list(found) == [key], found
    assert says in found[key]


@pytest.mark.parametrize("options", [
    ["-o", "StrictHostKeyChecking=yes"], ["-oStrictHostKeyChecking=accept-new"], ["-o StrictHostKeyChecking no"],
    ["-o", "ProxyJump=bastion"], ["-o ProxyJump=ops@bastion.internal:2222,jump2"], ["-oPORT=2222"],
    ["-o", "Port = 2222", "-oServerAliveInterval=30"], ["-o", "User=deploy"],
    ["-o", "IdentityFile=~/.ssh/id_ed25519", "-o", "IdentitiesOnly=yes"],
    ["-o", "UserKnownHostsFile=/etc/vllm/known_hosts"], ["-oConnectTimeout=1m", "-oBatchMode=yes"],
    ["-o", "ProxyJump=[2001:db8::1]:22"],
])
def test_listed_options_pass(options: list[str]) -> None:
    assert _findings({"dockerHost": SSH, "sshOpts": options}) == {}


def test_a_fleet_host_is_checked_with_its_own_key() -> None:
    hosts = [{"dockerHost": SSH}, {"dockerHost": "ssh://deploy@gpu02.internal", "sshOpts": ["-oKnownHostsCommand=id"]}]
    assert list(_findings({"hosts": hosts})) == ["vllm-serving:target.hosts[1].sshOpts[0]"]


def test_a_port_or_user_is_refused_only_where_dockerhost_says_otherwise() -> None:
    assert _findings({"dockerHost": "ssh://deploy@gpu01:2222", "sshOpts": ["-oPort=2222", "-oUser=deploy"]}) == {}
    assert list(_findings({"dockerHost": "ssh://deploy@gpu01:2222", "sshOpts": ["-oPort=22"]})) == [
        "vllm-serving:target.sshOpts[0]"]


def test_every_item_is_named_once() -> None:
    options = ("-o", "StrictHostKeyChecking=yes", "-oPermitLocalCommand=yes", "-o", "LocalCommand=id", "-F", "/x")
    assert [r.index for r in refusals(options)] == [2, 3, 5]


# --- every argv ssh reads to something off the list is refused -----------------------------------

_FREE = st.text(alphabet=" \t=\"'#;\\$`|&()<>*?~%@:,./-_aAzZ09", max_size=12)
_KEYWORD = st.sampled_from(sorted(set(KEYWORDS))).flatmap(
    lambda k: st.sampled_from([k, k.upper(), k.capitalize(), f'"{k}"', f"{k[:1].upper()}{k[1:]}"]))
_SEPARATOR = st.sampled_from(["=", " ", " = ", "  ", "=", "\t", " =", "= ", '"', ""])
_VALUE = st.one_of(_FREE, st.sampled_from(["yes", "no", "22", "bastion", "u@h:22,j", "/x/id", "~/.ssh/k", "none"]))
_SETTING = st.builds(lambda lead, k, sep, v: f"{lead}{k}{sep}{v}", st.sampled_from(["", " ", "=", "  "]),
                     _KEYWORD, _SEPARATOR, _VALUE)
_FLAGS = st.text(alphabet="1246ACGKMNTVXYZafgknqstvxyBDEFIJLOPQRSWbceilmopw", min_size=1, max_size=3)
_ITEM = st.one_of(
    st.builds(lambda s: f"-o{s}", _SETTING),  # -oKeyword=Value, -o Keyword Value
    st.builds(lambda f, s: f"-{f}o{s}", _FLAGS, _SETTING),  # combined flags ending in o
    st.builds(lambda f, v: f"-{f}{v}", _FLAGS, _VALUE),  # any flags, glued value
    st.just("-o"), _SETTING, _VALUE, st.just("--"),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_ITEM, min_size=1, max_size=4))
def test_an_accepted_argv_is_read_by_ssh_as_listed_options_only(options: list[str]) -> None:
    """What refusals() accepts, ssh reads - with the items Docker adds after them - as listed
    -o options with values their checks allow, and the host as dockerHost's: nothing else."""
    if refusals(tuple(options), user="deploy"):
        return
    argv = [*options, "-o ConnectTimeout=30", "-T", "-l", "deploy", "--", "gpu01.internal", "docker", "system",
            "dial-stdio"]
    read = read_argv(argv)
    operands = [r.value for r in read if r.kind == "operand"]
    assert operands == ["gpu01.internal", "docker", "system", "dial-stdio"], read
    assert [(r.kind, r.name) for r in read[-7:-4]] == [("option", "connecttimeout"), ("flag", "-T"), ("flag", "-l")]
    for item in read[:-7]:
        assert item.kind == "option" and item.name in ALLOWED, (options, item)
        value = item.value
        assert value and not any(c in value for c in " \t\"'#\\;$`|&<>()*?="), (options, item)
        if item.name == "proxyjump":
            assert all(JUMP.fullmatch(hop) for hop in value.split(",")) or value.lower() == "none"


@pytest.mark.parametrize("keyword", sorted(set(KEYWORDS) - set(ALLOWED)))
def test_every_other_ssh_keyword_is_refused_in_every_spelling(keyword: str) -> None:
    spellings = [[f"-o{keyword}=x"], [f"-o {keyword.upper()} x"], ["-o", f"{keyword.capitalize()}=x"],
                 [f'-o "{keyword}" x'], [f"-To{keyword}=x"]]
    assert all(refusals(tuple(s)) for s in spellings), keyword


@pytest.mark.parametrize("flag", sorted(TAKES_ARGUMENT - {"o"}) + ["A", "C", "N", "T", "v", "4", "G", "M"])
def test_every_other_flag_is_refused(flag: str) -> None:
    assert refusals((f"-{flag}", "x")) and refusals((f"-{flag}x",))


ACCEPTED_SAMPLES = [
    ["-o", "StrictHostKeyChecking=accept-new", "-oUserKnownHostsFile=/tmp/kh"],
    ["-o ProxyJump=ops@bastion.example:2222,jump2.example", "-oPort=2200"],
    ["-oIdentityFile=~/.ssh/id_ed25519", "-o", "IdentitiesOnly=yes", "-oServerAliveInterval=30"],
]


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client here")
@pytest.mark.parametrize("options", ACCEPTED_SAMPLES)
def test_ssh_itself_reads_accepted_options_as_expected(options: list[str]) -> None:
    """`ssh -G` prints the configuration it would use: the host stays dockerHost's and no command
    runs locally (no proxycommand but the one ProxyJump implies, no localcommand)."""
    assert refusals(tuple(options), user="deploy") == []
    done = subprocess.run(["ssh", "-G", "-F", "/dev/null", *options, "-l", "deploy", "--", "gpu01.example.internal"],
                          capture_output=True, text=True, timeout=10, check=True)
    config = dict(line.split(" ", 1) for line in done.stdout.splitlines() if " " in line)
    assert config["hostname"] == "gpu01.example.internal" and config["user"] == "deploy"
    assert "localcommand" not in config and "permitlocalcommand" not in {k for k, v in config.items() if v == "yes"}
    assert "proxycommand" not in config


ONE_ITEM = "write each option as -o Keyword=Value"
LISTED = ("Port, User, IdentityFile, IdentitiesOnly, StrictHostKeyChecking, UserKnownHostsFile, ConnectTimeout, "
          "ConnectionAttempts, ServerAliveInterval, ServerAliveCountMax, TCPKeepAlive, BatchMode, ProxyJump")
BARE = ("is not an option: ssh would take a bare word as the host to connect to, and send the Docker API calls and "
        "the registry password there")


# Whole refusals, word for word: they are what a reviewer reads in `pulumi preview` and CI logs.
@pytest.mark.parametrize(("options", "message", "fix"), [
    # a lone '-' is no flag for getopt: ssh reads it as the host; '--' ends the options, so the next word is
    (["-"], f"'-' {BARE}", f"remove it: the host is target.dockerHost; {ONE_ITEM}"),
    (["--"], f"'--' {BARE}", f"remove it: the host is target.dockerHost; {ONE_ITEM}"),
    (["-o", "Hostname=x"], "Hostname would send the Docker API calls (with the registry password and the API key) "
     "to another host than dockerHost, which is what a review reads",
     "remove it: the host is target.dockerHost (ssh://user@host[:port])"),
    # an unknown keyword is named up to 40 characters
    (["-o", "Foo" + "x" * 50 + "=1"], f"the ssh option Foo{'x' * 37} is not one this project passes to ssh",
     f"remove it; only these are passed: {LISTED} (keep other settings in the deployer's own ~/.ssh/config)"),
    (["-CoFoo=1"], "'-CoFoo=1' combines flags, and ssh reads -o in it: the ssh option Foo is not one this "
     "project passes to ssh",
     f"remove it; only these are passed: {LISTED} (keep other settings in the deployer's own ~/.ssh/config)"),
    (["-X"], "'-X' is ssh's -X flag, which is not passed: only -o options from the list are",
     f"{ONE_ITEM}, one per item, with a keyword of: {LISTED}; keep other settings in the deployer's own "
     "~/.ssh/config"),
    # a value off the list is shown up to 60 characters
    (["-o", "Port=" + "9" * 80], f"Port={'9' * 60} is not a value this project passes to ssh",
     "give Port a port number (1-65535)"),
    (["-o", "ProxyJump=" + ",".join(["h"] * 9)], f"ProxyJump={','.join(['h'] * 9)} is not a value this project "
     "passes to ssh", "give ProxyJump [user@]host[:port], up to 8 separated by ','"),
])
def test_each_refusal_reads_as_written_here(options: list[str], message: str, fix: str) -> None:
    (refusal,) = refusals(tuple(options))
    assert (refusal.index, refusal.message, refusal.fix) == (0, message, fix)


@pytest.mark.parametrize("jumps", [",".join(["bastion"] * 8), "none", "NONE"])
def test_up_to_eight_jumps_pass_and_none_reads_as_no_jump(jumps: str) -> None:
    assert refusals(("-o", f"ProxyJump={jumps}")) == []


@pytest.mark.parametrize(("keyword", "value"), [
    ("IdentitiesOnly", "YES"), ("StrictHostKeyChecking", "Accept-New"), ("BatchMode", "No"),
    ("UserKnownHostsFile", "/etc/vllm/known_hosts"), ("ConnectTimeout", "30s"), ("ServerAliveCountMax", "3"),
])
def test_a_listed_value_passes_in_any_case_ssh_accepts(keyword: str, value: str) -> None:
    # readconf.c parse_multistate: strcasecmp(arg, multistate_ptr[i].key) (OpenSSH, via the search index)
    assert refusals((f"-o{keyword}={value}",)) == []


@pytest.mark.parametrize(("keyword", "value"), [
    ("IdentitiesOnly", "maybe"), ("UserKnownHostsFile", "known_hosts"), ("ConnectTimeout", "soon"),
    ("ServerAliveCountMax", "0"), ("ConnectionAttempts", "1000"),
])
def test_a_value_off_its_keyword_s_form_is_refused(keyword: str, value: str) -> None:
    (refusal,) = refusals((f"-o{keyword}={value}",))
    assert refusal.message == f"{keyword}={value} is not a value this project passes to ssh"


@pytest.mark.parametrize(("options", "indices"), [
    # a flag taking an argument swallows the next item (getopt): one refusal for both, then go on
    (["-p", "22", "-A"], [0, 2]), (["-Cp", "22", "-A"], [0, 2]),
    # a refused -o pair is two items; the item after it is read on its own
    (["-o", "ProxyCommand=x", "-A"], [0, 2]), (["-o", "ProxyCommand=x", "-oPort=22"], [0]),
])
def test_each_refused_option_is_named_once_and_the_next_one_is_still_read(options: list[str],
                                                                         indices: list[int]) -> None:
    assert [r.index for r in refusals(tuple(options))] == indices


def test_the_options_that_turn_off_host_key_checking_are_named_by_their_item() -> None:

    options = ("-o", "StrictHostKeyChecking=no", "-oUserKnownHostsFile=/dev/null", "-oStrictHostKeyChecking=yes",
               "-o", "stricthostkeychecking=NO")
    assert unchecked_host_key(options) == [(0, "StrictHostKeyChecking=no"), (2, "UserKnownHostsFile=/dev/null"),
                                           (4, "StrictHostKeyChecking=NO")]
    assert unchecked_host_key(("-oStrictHostKeyChecking=accept-new", "-oBatchMode=yes")) == []


def test_the_item_after_a_refused_pair_of_the_wrong_form_is_still_read() -> None:
    assert [r.index for r in refusals(("-o", "ProxyCommand nc %h %p", "-A"))] == [0, 2]


def test_ssh_options_beside_a_local_socket_are_checked_without_an_ssh_user_or_port() -> None:
    assert _findings({"dockerHost": "unix:///var/run/docker.sock", "sshOpts": ["-oPort=22"]}) == {}
    assert list(_findings({"dockerHost": "unix:///var/run/docker.sock", "sshOpts": ["-A"]})) == [
        "vllm-serving:target.sshOpts[0]"]
