"""Secret masking for command lines: the one place, applied before any output.

Secrets are recognised by their shape, not from a list of examples:
- a **name that says secret** (a word of it, split at ``-``, ``_``, ``.`` and camelCase, is or ends with
  password, passwd, passphrase, secret, token, credential(s), key, or is pass, pwd, pw, pat, auth, cookie,
  session, sig, signature, otp): its value is masked in ``--name=value``, ``--name value``, ``--name:value``,
  ``NAME=value`` (PGPASSWORD, GITHUB_PAT, accessToken) and in a URL's query parameters (``?api_key=...``);
- **credentials in a URL**: the password of ``scheme://user:pass@host``, also with an empty user
  (``redis://:pw@db``);
- **header-shaped arguments** whose header names a secret: ``Authorization: ...``, ``X-Api-Key: ...``,
  ``Cookie: ...``; and ``Bearer x`` / ``Basic x`` / ``token x`` anywhere;
- **the common clients' password flags**: ``-pSECRET`` of mysql and its kin, ``-p``/``-a`` of sshpass and
  redis-cli, ``-u user:pass`` / ``--user user:pass`` of curl;
- **inside one argument**: an argument that is itself a command line (``bash -c 'mysql --password=x db'``)
  is split like a shell would and masked word by word.
"""

from __future__ import annotations

import re
import shlex
from typing import Sequence

MASK = "****"

# A word of a name that *is* one of these says secret ...
_SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pass", "pwd", "pw", "token", "secret", "key", "apikey", "credential",
    "credentials", "auth", "authorization", "cookie", "session", "pat", "sig", "signature", "otp",
})
# ... and so does a word that *ends* with one of these (PGPASSWORD, MYTOKEN, APIKEY; also --monkey: masking a
# harmless value is the cheaper mistake).
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "credential", "credentials", "key")

_FLAG = re.compile(r"^(-{1,2}([A-Za-z][\w.-]*))([=:](.*))?$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][\w.-]*)=(.*)$", re.DOTALL)
_HEADER = re.compile(r"^([A-Za-z][\w-]*)\s*:\s*(\S.*)$", re.DOTALL)
_SCHEME_AUTH = re.compile(r"(\b(?:Bearer|Basic|Digest|token)\s+)([A-Za-z0-9._~+/=-]{4,})", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)([^\s@/]+)(@)", re.IGNORECASE)
_QUERY_PARAM = re.compile(r"([?&;]([A-Za-z][\w.-]*)=)([^&#\s;]+)")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Programs whose short flag carries a password glued to it or as the next argument.
_PASSWORD_FLAGS = {
    "mysql": "-p", "mysqldump": "-p", "mysqladmin": "-p", "mysqlimport": "-p", "mysqlcheck": "-p",
    "mysqlshow": "-p", "mariadb": "-p", "mariadb-dump": "-p", "mariadb-admin": "-p", "mycli": "-p",
    "sshpass": "-p", "redis-cli": "-a", "valkey-cli": "-a", "keydb-cli": "-a",
}
_GLUED_ONLY = frozenset({"mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mariadb",
                         "mariadb-dump", "mariadb-admin", "mycli"})  # their `-p x` asks, x is a database
_USER_PASS_FLAGS = {"curl": ("-u", "--user", "--proxy-user", "-U"), "wget": ("--user", "--password")}


def names_secret(name: str) -> bool:
    """True when a word of a flag, variable, parameter or header name says it holds a secret."""
    for word in re.split(r"[-_.]+", _CAMEL.sub("_", name).lower()):
        if word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS):
            return True
    return False


def redact_text(text: str) -> str:
    """Mask secrets inside free text: URL credentials and secret query parameters, scheme credentials."""
    text = _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<3>", text)
    text = _QUERY_PARAM.sub(lambda m: f"{m.group(1)}{MASK}" if names_secret(m.group(2)) else m.group(0), text)
    return _SCHEME_AUTH.sub(rf"\g<1>{MASK}", text)


def _program(argv: Sequence[str]) -> str:
    return argv[0].rsplit("/", 1)[-1] if argv else ""


def _mask_user_pass(value: str) -> str:
    user, colon, _ = value.partition(":")
    return f"{user}:{MASK}" if colon else value


def redact_argv(argv: Sequence[str], depth: int = 0) -> list[str]:
    """Mask the secret values in an argument vector; flag and variable names stay readable."""
    program = _program(argv)
    out: list[str] = []
    pending: str | None = None  # how to mask the next argument: "all" or "after-colon"
    for arg in argv:
        if pending is not None:
            out.append(MASK if pending == "all" else _mask_user_pass(arg))
            pending = None
            continue
        shown, pending = _redact_arg(arg, program, depth)
        out.append(shown)
    return out


Masked = tuple[str, "str | None"]  # (what to show, how to mask the next argument)


def _redact_arg(arg: str, program: str, depth: int) -> Masked:
    for rule in (_client_password, _client_user):
        masked = rule(arg, program)
        if masked is not None:
            return masked
    flag = _FLAG.match(arg)
    if flag:
        if names_secret(flag.group(2)):
            if flag.group(3) is None:
                return arg, "all"
            return f"{flag.group(1)}{flag.group(3)[0]}{MASK}", None
        return _redact_word(arg, depth), None
    assignment = _ASSIGNMENT.match(arg)
    if assignment and names_secret(assignment.group(1)):
        return f"{assignment.group(1)}={MASK}", None
    header = _HEADER.match(arg)
    if header and "://" not in arg and names_secret(header.group(1)):
        scheme = re.match(r"(?:Bearer|Basic|Digest|token)\s+", header.group(2), re.IGNORECASE)
        return f"{header.group(1)}: {scheme.group(0) if scheme else ''}{MASK}", None
    return _redact_word(arg, depth), None


def _client_password(arg: str, program: str) -> Masked | None:
    """``-pSECRET`` (mysql and kin, sshpass), ``-a SECRET`` (redis-cli): the common clients' password flags."""
    flag = _PASSWORD_FLAGS.get(program)
    if not flag or not arg.startswith(flag) or arg.startswith("--"):
        return None
    if len(arg) > len(flag):
        return flag + MASK, None
    return None if program in _GLUED_ONLY else (arg, "all")


def _client_user(arg: str, program: str) -> Masked | None:
    """curl's ``-u user:pass`` / ``--user=user:pass``, wget's ``--password x``."""
    flags = _USER_PASS_FLAGS.get(program, ())
    if arg in flags:
        return arg, "all" if program == "wget" and arg == "--password" else "after-colon"
    flag = _FLAG.match(arg)
    if flag and flag.group(3) is not None and flag.group(1) in flags:
        return f"{flag.group(1)}{flag.group(3)[0]}{_mask_user_pass(flag.group(4))}", None
    return None


def _redact_word(arg: str, depth: int) -> str:
    """One argument with no secret shape of its own: its free text, and, when it holds several words (a
    command passed to ``sh -c``), each of them as an argument."""
    if depth < 2 and any(c.isspace() for c in arg.strip()):
        try:
            words = shlex.split(arg)
        except ValueError:
            words = arg.split()
        masked = redact_argv(words, depth + 1)
        if masked != words:
            return " ".join(masked)
    return redact_text(arg)


def command_line(argv: Sequence[str], extra: Sequence[re.Pattern[str]] = ()) -> str:
    """A redacted, shell-quoted command line for display; ``extra`` patterns mask whatever they match."""
    line = " ".join(shlex.quote(a) if a and not _plain(a) else a for a in redact_argv(argv))
    for pattern in extra:
        line = pattern.sub(MASK, line)
    return line


def compile_patterns(text: str) -> list[re.Pattern[str]]:
    """FANWHY_MASK_PATTERNS: regular expressions separated by ``||``; each match is masked."""
    patterns = []
    for raw in filter(None, (p.strip() for p in text.split("||"))):
        try:
            patterns.append(re.compile(raw))
        except re.error as error:
            raise ValueError(f"{raw!r} is not a regular expression: {error}") from None
    return patterns


class Redactor:
    """The one place command lines are made safe, before any output (REST, Socket.IO, logs, history,
    metric labels all read the masked snapshot). ``names_only`` drops command lines altogether."""

    def __init__(self, patterns: str = "", names_only: bool = False):
        self.extra = compile_patterns(patterns)
        self.names_only = names_only

    def command(self, argv: Sequence[str]) -> str | None:
        if self.names_only or not argv:
            return None
        return command_line(argv, self.extra)

    def text(self, text: str) -> str:
        """Free text (an alert's message on its way out): URL credentials, secret parameters, extra patterns."""
        text = redact_text(text)
        for pattern in self.extra:
            text = pattern.sub(MASK, text)
        return text


def _plain(arg: str) -> bool:
    return all(c.isalnum() or c in "-_./:=,@%+*" for c in arg)
