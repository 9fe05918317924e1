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
  is split like a shell would and masked word by word;
- **wherever the program stands**: the clients' rules apply from the word that names the client on, so
  ``nohup sshpass -p x``, ``timeout 10 curl -u bob:x``, ``sudo -u db mysql -px`` and any other wrapper
  (``env``, ``nice``, ``taskset``, ``numactl``, ``xargs``, ``srun`` ...) are masked as the client alone is;
- **structured text in an argument**: ``"key": "value"`` (JSON), ``key: value`` (YAML-ish) and ``key=value``
  whose key names a secret, and the user-info of a URL with no password (``https://ghp_x@github.com``: a token
  standing as the user name);
- **setters**: after ``set``, ``config`` or ``configure`` (``aws configure set aws_secret_access_key X``,
  ``git config user.password X``, ``npm config set //host/:_authToken X``) a name that says secret masks the
  value after it.

A masked line is then bounded (MAX_COMMAND_CHARS, with a visible "… (N more characters)"): a process with a
megabyte of arguments would otherwise travel whole in every update to every client.
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
_SCHEME_WORD = re.compile(r"(?:Bearer|Basic|Digest|token)\s", re.IGNORECASE)
_QUERY_PARAM = re.compile(r"([?&;]([A-Za-z][\w.-]*)=)([^&#\s;]+)")
# user-info with no password: ``https://TOKEN@host`` (a login of ssh-like schemes is a user name, not a secret)
_URL_USER = re.compile(r"(\b(?!(?:ssh|sftp|scp|git\+ssh|ssh\+git)://)[a-z][a-z0-9+.-]*://)([^\s:/@]+)(@)",
                       re.IGNORECASE)
# ``"key": "value"`` / ``key: value`` / ``key=value`` inside text (JSON, YAML-ish, a config string)
_KEY_VALUE = re.compile(r"""(["']?)([A-Za-z_][\w.-]*)\1(\s*[:=]\s*)(?!(?:Bearer|Basic|Digest|token)\s)"""
                        r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;}\]&"']+)""")
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
_CLIENTS = frozenset(_PASSWORD_FLAGS) | frozenset(_USER_PASS_FLAGS)
_SETTER_VERBS = frozenset({"set", "config", "configure", "config:set"})

MAX_COMMAND_CHARS = 4096  # a command line is stored and sent up to this many characters


def names_secret(name: str) -> bool:
    """True when a word of a flag, variable, parameter or header name says it holds a secret."""
    for word in re.split(r"[-_.]+", _CAMEL.sub("_", name).lower()):
        if word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS):
            return True
    return False


def redact_text(text: str) -> str:
    """Mask secrets inside free text: URL credentials and secret query parameters, scheme credentials, and
    secret-named keys of JSON, YAML-ish and ``key=value`` text."""
    # Each pattern runs only where its anchor character is present: the name-like prefixes of these patterns
    # would otherwise scan a long word once per starting position (a megabyte of arguments took seconds a tick).
    if "://" in text:
        text = _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<3>", text)
        text = _URL_USER.sub(rf"\g<1>{MASK}\g<3>", text)
    if "=" in text:
        text = _QUERY_PARAM.sub(lambda m: f"{m.group(1)}{MASK}" if names_secret(m.group(2)) else m.group(0), text)
    if _SCHEME_WORD.search(text):
        text = _SCHEME_AUTH.sub(rf"\g<1>{MASK}", text)
    if "=" in text or ":" in text:
        text = _KEY_VALUE.sub(_mask_key_value, text)
    return text


def _mask_key_value(match: re.Match[str]) -> str:
    quote, key, separator, value = match.group(1), match.group(2), match.group(3), match.group(4)
    if not names_secret(key) or value == MASK or value.strip("\"'") == MASK:
        return match.group(0)
    shown = f"{value[0]}{MASK}{value[0]}" if value[0] in "\"'" else MASK
    return f"{quote}{key}{quote}{separator}{shown}"


def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def bounded(line: str, limit: int = MAX_COMMAND_CHARS) -> str:
    """``line`` cut to ``limit`` characters, with a marker saying how much more there was."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… ({len(line) - limit} more characters)"


def _mask_user_pass(value: str) -> str:
    user, colon, _ = value.partition(":")
    return f"{user}:{MASK}" if colon else value


def redact_argv(argv: Sequence[str], depth: int = 0) -> list[str]:
    """Mask the secret values in an argument vector; flag and variable names stay readable. The program whose
    client rules apply is the last word so far that names a known client (a wrapper in front changes nothing)."""
    program = _name(argv[0]) if argv else ""
    setting = False  # a setter verb was seen: a secret-named word masks the value after it
    out: list[str] = []
    pending: str | None = None  # how to mask the next argument: "all" or "after-colon"
    for arg in argv:
        if pending is not None:
            out.append(MASK if pending == "all" else _mask_user_pass(arg))
            pending = None
            continue
        if _name(arg) in _CLIENTS and not arg.startswith("-"):
            program = _name(arg)
        if setting and _ASSIGNMENT.match(arg) is None and not arg.startswith("-") and names_secret(arg):
            out.append(arg)
            pending = "all"
            continue
        setting = setting or arg.lower() in _SETTER_VERBS
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
    command passed to ``sh -c``; not a JSON document), each of them as an argument."""
    text = redact_text(arg)
    if depth < 2 and any(c.isspace() for c in text.strip()) and not text.lstrip().startswith(("{", "[")):
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        masked = redact_argv(words, depth + 1)
        if masked != words:
            return " ".join(masked)
    return text


def command_line(argv: Sequence[str], extra: Sequence[re.Pattern[str]] = (), limit: int | None = None) -> str:
    """A redacted, shell-quoted command line for display; ``extra`` patterns mask whatever they match. With
    ``limit``, bounded to that many characters (masked first, so a cut never shows part of a secret)."""
    line = " ".join(shlex.quote(a) if a and not _plain(a) else a for a in redact_argv(argv))
    for pattern in extra:
        line = pattern.sub(MASK, line)
    return line if limit is None else bounded(line, limit)


def compile_patterns(sources: Sequence[str]) -> list[re.Pattern[str]]:
    """FANWHY_MASK_PATTERNS (regular expressions; the settings split the variable at ``||``): each match is
    masked."""
    patterns = []
    for raw in sources:
        try:
            patterns.append(re.compile(raw))
        except re.error as error:
            raise ValueError(f"{raw!r} is not a regular expression: {error}") from None
    return patterns


class Redactor:
    """The one place command lines are made safe, before any output (REST, Socket.IO, logs, history,
    metric labels all read the masked snapshot). ``names_only`` drops command lines altogether."""

    def __init__(self, patterns: Sequence[str] = (), names_only: bool = False):
        self.extra = compile_patterns(patterns)
        self.names_only = names_only

    def command(self, argv: Sequence[str], limit: int | None = MAX_COMMAND_CHARS) -> str | None:
        """The masked command line, bounded to ``limit`` characters (None: whole, for one process on request)."""
        if self.names_only or not argv:
            return None
        return command_line(argv, self.extra, limit)

    def words(self, argv: Sequence[str], limit: int = MAX_COMMAND_CHARS) -> list[str] | None:
        """The masked argument vector, word by word (extra patterns too), each bounded to ``limit`` characters."""
        if self.names_only or not argv:
            return None
        masked = []
        for word in redact_argv(argv):
            for pattern in self.extra:
                word = pattern.sub(MASK, word)
            masked.append(bounded(word, limit))
        return masked

    def text(self, text: str) -> str:
        """Free text (an alert's message on its way out): URL credentials, secret parameters, extra patterns."""
        text = redact_text(text)
        for pattern in self.extra:
            text = pattern.sub(MASK, text)
        return text


def _plain(arg: str) -> bool:
    return all(c.isalnum() or c in "-_./:=,@%+*" for c in arg)
