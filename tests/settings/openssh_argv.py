"""A reference model of how OpenSSH's `ssh` reads its argv, written from its source for the tests.

Vendored from openssh-portable at 0ef0f5a839831c213f24e3f2ae434765c607fb50 (BSD licence):
- ssh.c `main`: `getopt(ac, av, OPTSTRING)`; after the first operand (the host) option parsing
  restarts (`goto again`) unless `--` ended it; `-o` hands its argument to process_config_line;
- readconf.c `process_config_line_depth`: trailing white space stripped, the keyword taken with
  `strdelim` (skipping leading white space), lower-cased; the rest split with `argv_split`;
- misc.c `strdelim_internal`: splits at white space, a quote or one `=`; a token starting with a
  quote runs to the next quote.
It is deliberately independent of vllm_serving/settings/ssh_options.py: the property tests check
that module against this reading.
"""

from __future__ import annotations

from dataclasses import dataclass

OPTSTRING = "1246ACGKMNTVXYZafgknqstvxy" "B:D:E:F:I:J:L:O:P:Q:R:S:W:b:c:e:i:l:m:o:p:w:"
TAKES_ARGUMENT = {c for i, c in enumerate(OPTSTRING) if i + 1 < len(OPTSTRING) and OPTSTRING[i + 1] == ":"}
FLAGS = {c for c in OPTSTRING if c != ":"}
WHITESPACE = " \t\r\n"
QUOTE = '"'
# readconf.c keywords[] (every name ssh_config(5) accepts, aliases and deprecated ones included)
KEYWORDS = """protocol cipher fallbacktorsh globalknownhostsfile2 rhostsauthentication userknownhostsfile2
useroaming usersh useprivilegedport afstokenpassing kerberosauthentication kerberostgtpassing rsaauthentication
rhostsrsaauthentication compressionlevel gssapiauthentication gssapidelegatecredentials pkcs11provider
smartcarddevice forwardagent forwardx11 forwardx11trusted forwardx11timeout exitonforwardfailure xauthlocation
gatewayports passwordauthentication kbdinteractiveauthentication kbdinteractivedevices
challengeresponseauthentication skeyauthentication tisauthentication pubkeyauthentication dsaauthentication
hostbasedauthentication identityfile identityfile2 identitiesonly certificatefile addkeystoagent identityagent
hostname hostkeyalias proxycommand port ciphers macs remoteforward localforward permitremoteopen user host match
tag escapechar globalknownhostsfile userknownhostsfile connectionattempts batchmode checkhostip
stricthostkeychecking compression tcpkeepalive keepalive numberofpasswordprompts syslogfacility loglevel
logverbose dynamicforward preferredauthentications hostkeyalgorithms casignaturealgorithms bindaddress
bindinterface clearallforwardings enablesshkeysign verifyhostkeydns nohostauthenticationforlocalhost rekeylimit
connecttimeout addressfamily serveraliveinterval serveralivecountmax sendenv setenv controlpath controlmaster
controlpersist hashknownhosts include tunnel tunneldevice localcommand permitlocalcommand remotecommand
visualhostkey kexalgorithms ipqos requesttty sessiontype stdinnull forkafterauthentication proxyusefdpass
canonicaldomains canonicalizefallbacklocal canonicalizehostname canonicalizemaxdots canonicalizepermittedcnames
streamlocalbindmask streamlocalbindunlink revokedhostkeys fingerprinthash updatehostkeys
hostbasedacceptedalgorithms hostbasedkeytypes pubkeyacceptedalgorithms pubkeyacceptedkeytypes ignoreunknown
proxyjump securitykeyprovider knownhostscommand requiredrsasize enableescapecommandline obscurekeystroketiming
channeltimeout versionaddendum refuseconnection warnweakcrypto""".split()


@dataclass(frozen=True)
class Read:
    """One thing ssh took from the argv: a flag (`-F`) with its argument, a config keyword (`-o`)
    with the rest of its line, or an operand (the host, then the command)."""

    kind: str  # "flag", "option" or "operand"
    name: str
    value: str


def strdelim(text: str) -> tuple[str | None, str | None]:
    """misc.c strdelim: (token, rest); rest None when the text ends."""
    cut = next((i for i, c in enumerate(text) if c in WHITESPACE + QUOTE + "="), None)
    if cut is None:
        return text, None
    if text[cut] == QUOTE:
        body = text[:cut] + text[cut + 1:]
        close = body.find(QUOTE, cut)
        if close < 0:
            return None, None  # no matching quote
        rest = body[close + 1:]
        return body[:close], rest.lstrip(WHITESPACE)
    token, rest = text[:cut], text[cut + 1:]
    was_equals = text[cut] == "="
    rest = rest.lstrip(WHITESPACE)
    if rest.startswith("=") and not was_equals:
        rest = rest[1:].lstrip(WHITESPACE)
    return token, rest


def config_line(line: str) -> Read | None:
    """readconf.c process_config_line: the keyword (lower case) and the rest; None when ignored."""
    line = line.rstrip(WHITESPACE + "\f")
    if not line:
        return None
    keyword, rest = strdelim(line)
    if keyword == "":
        keyword, rest = strdelim(rest or "")
    if keyword is None or not keyword or keyword.startswith("#"):
        return None
    return Read("option", keyword.lower(), (rest or "").lstrip(WHITESPACE))


def read_argv(argv: list[str]) -> list[Read]:
    """What ssh reads from `argv` (without argv[0]), in order."""
    found: list[Read] = []
    index, host_seen = 0, False
    while index < len(argv):
        arg = argv[index]
        if arg == "--":
            found += [Read("operand", "", a) for a in argv[index + 1:]]
            return found
        if not arg.startswith("-") or arg == "-":
            found.append(Read("operand", "", arg))
            index += 1
            if host_seen:  # after the host's restart, a second operand starts the command
                found += [Read("operand", "", a) for a in argv[index:]]
                return found
            host_seen = True
            continue
        position = 1
        while position < len(arg):
            flag = arg[position]
            if flag not in FLAGS:
                found.append(Read("flag", f"-{flag}", "?"))  # usage(): ssh exits
                return found
            if flag in TAKES_ARGUMENT:
                value = arg[position + 1:]
                if not value:
                    index += 1
                    value = argv[index] if index < len(argv) else ""
                if flag == "o":
                    read = config_line(value)
                    if read is not None:
                        found.append(read)
                else:
                    found.append(Read("flag", f"-{flag}", value))
                break
            found.append(Read("flag", f"-{flag}", ""))
            position += 1
        index += 1
    return found
