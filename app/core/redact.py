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
- **the common clients' password flags**, a data table (app.core.clients, over 40 clients): ``-pSECRET`` of
  mysql and its kin, ``ldapsearch -w X``, ``smbclient -U user%X``, ``docker login -p X``, ``sqlplus scott/X@db``,
  ``vault login X``, ``htpasswd -b f u X`` ...;
- **what looks like a secret where one is expected**: a known token prefix anywhere (``ghp_``, ``glpat-``,
  ``xoxb-``, ``AKIA`` ...), a long high-entropy word (mixed case and digits, switching often: not a path, a model
  name, a hash or a UUID), and a password-like word (letters with digits or symbols) after ``-p``, ``-P``, ``-w``,
  ``-k`` or ``-K`` of a client the table does not know (``tool -p hunter2``);
- **inside one argument**: an argument that is itself a command line (``bash -c 'mysql --password=x db'``)
  is split like a shell would and masked word by word;
- **wherever the program stands**: the clients' rules apply from the word that names the client on, so
  ``nohup sshpass -p x``, ``timeout 10 curl -u bob:x``, ``sudo -u db mysql -px`` and any other wrapper
  (``env``, ``nice``, ``taskset``, ``numactl``, ``xargs``, ``srun`` ...) are masked as the client alone is;
- **structured text in an argument**: ``"key": "value"`` (JSON), ``key: value`` (YAML-ish) and ``key=value``
  whose key names a secret, and the user-info of a URL with no password (``https://ghp_x@github.com``: a token
  standing as the user name);
- **by what the secret is, whatever the client**: a password hasher's plaintext (``openssl passwd -6 X``,
  ``mkpasswd X``, ``slappasswd -s X``, ``caddy hash-password --plaintext X``, ``mosquitto_passwd -b f u X``); a
  ``user:secret`` pair after a flag that names credentials (``--src-creds u:X``, ``--user root:X``), or after any
  flag where the second half reads as a secret (not a port, a time, a tag or a group: ``chown -c root:wheel``); a
  cookie's value (``curl -b sid=X``); ``domain/user:X@host``; SQL's ``IDENTIFIED BY X`` and ``PASSWORD 'X'``; a
  glued short password flag (``ldapmodify -wX``, ``rar -hpX``, and ``-pX`` that reads as a password after any
  program); the string literals of inline code (``node -e "login('admin','X')"``, ``python -c``, ``php -r``,
  ``julia -e``: a literal of 6 or more characters);
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

from . import clients
from .secret_text import (
    MASK as MASK,
)
from .secret_text import (
    inline_code,
    names_secret,
    password_like,
    redact_text,
)

_FLAG = re.compile(r"^(-{1,2}([A-Za-z][\w.-]*))([=:](.*))?$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][\w.-]*)=(.*)$", re.DOTALL)
_HEADER = re.compile(r"^([A-Za-z][\w-]*)\s*:\s*(\S.*)$", re.DOTALL)
_SHORT_FLAG = re.compile(r"^-[pPwkK]$")  # the letters clients give their password flags (-p, -w, -k)
_USER_SLASH = re.compile(r"^((?:userid=)?[^\s/@=-][^\s/@]*/)([^\s@]+)(@\S*)?$", re.IGNORECASE)

_SETTER_VERBS = frozenset({"set", "config", "configure", "config:set"})
# user:secret as a flag's value (not host:port, a time, image:tag or a version: the secret reads as a password)
_USER_SECRET = re.compile(r"^([^\s:/@=]+:)([^\s/@]+)$")
# a long flag that names what it takes as credentials: the second half of its user:secret is masked whatever it is
_CREDENTIALS_FLAG = re.compile(r"^--[\w-]*(cred|user|auth|login|pass|secret|token)", re.IGNORECASE)
_GLUED_SHORT = re.compile(r"^(-[pPw])(.+)$")  # -pSECRET after a program the table does not know
# the flags that take inline code, by interpreter (what follows is code, not a file)
_INLINE = {"python": ("-c",), "node": ("-e", "--eval", "-p", "--print"), "bun": ("-e", "--eval", "-p", "--print"),
           "deno": ("eval",), "ruby": ("-e",), "perl": ("-e", "-E"), "php": ("-r",), "julia": ("-e", "-E", "--eval"),
           "Rscript": ("-e",), "lua": ("-e",), "osascript": ("-e",)}

MAX_COMMAND_CHARS = 4096  # a command line is stored and sent up to this many characters


def _interpreter(program: str) -> str:
    return re.sub(r"[\d.]+$", "", program).replace("pypy", "python").replace("nodejs", "node")


def _name(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def bounded(line: str, limit: int = MAX_COMMAND_CHARS) -> str:
    """``line`` cut to ``limit`` characters, with a marker saying how much more there was."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… ({len(line) - limit} more characters)"


def _mask_after(value: str, separator: str) -> str:
    user, found, _ = value.partition(separator)
    return f"{user}{separator}{MASK}" if found else value


def redact_argv(argv: Sequence[str], depth: int = 0) -> list[str]:
    """Mask the secret values in an argument vector; flag and variable names stay readable. The program whose
    client rules apply is the last word so far that names a known client (a wrapper in front changes nothing)."""
    state = _State(_name(argv[0]) if argv else "")
    out: list[str] = []
    for arg in argv:
        if state.pending is not None:
            how, state.pending = state.pending, None
            if not (how == "generic" and arg.startswith("-") and len(arg) > 1):  # a flag, not the value: -genkey
                out.append(_masked_value(arg, how))
                continue
        out.append(state.take(arg, depth))
    last = clients.LAST_WORD_WITH_FLAG.get(state.program)
    if last and len(out) > 2 and any(re.match(rf"^-[A-Za-z]*{last}", a) for a in out) and not out[-1].startswith("-"):
        out[-1] = MASK  # htpasswd -b FILE USER PASSWORD
    return out


def _masked_value(arg: str, how: str) -> str:
    if how in ("user:pass", "user%pass", "user,pass"):
        return _mask_after(arg, how[4])
    if how == "name=value":
        return _mask_after(arg, "=") if "=" in arg else MASK
    if how == "code":
        return inline_code(arg)
    return MASK


def _pair_secret(word: str) -> bool:
    """The second half of ``user:secret`` reads as a secret: 6 or more characters with a letter and a non-letter, or
    letters of both cases (``ZqAAAAAAAA``); not a version or a port (a tag like ``latest``, ``Release`` or ``1.25``
    stays)."""
    letters = [c for c in word if c.isalpha()]
    mixed_case = any(c.isupper() for c in letters[1:]) and any(c.islower() for c in letters)
    return len(word) >= 6 and ":" not in word and bool(letters) \
        and (len(letters) < len(word) or mixed_case) and not word.replace(".", "").isdigit()


class _State:
    """What the words so far say about the next one: the client they run, its bare words, a pending value."""

    def __init__(self, program: str):
        self.program = program
        self.words: list[str] = []  # bare words after the program: its subcommands and positionals
        self.setting = False  # a setter verb was seen: a secret-named word masks the value after it
        self.pending: str | None = None  # how to mask the next word: a clients.Flag, or "generic"
        self.short_flag = False  # the word before was a short flag of a client the table does not know
        self.before: str | None = None  # the word before this one

    def take(self, arg: str, depth: int) -> str:
        before, self.before = self.before, arg
        after_short, self.short_flag = self.short_flag, False
        bare = not arg.startswith("-")
        if bare and (_name(arg) in clients.NAMES or _interpreter(_name(arg)) in _INLINE):
            self.program, self.words = _name(arg), []
            return arg
        if arg in _INLINE.get(_interpreter(self.program), ()):
            self.pending = "code"
            return arg
        shown = self._client(arg)
        if shown is not None:
            return shown
        shown = self._by_place(arg, before, after_short) if bare else self._glued(arg)
        if shown is not None:
            return shown
        if self.setting and bare and _ASSIGNMENT.match(arg) is None and names_secret(arg):
            self.pending = "generic"
            return arg
        self.setting = self.setting or arg.lower() in _SETTER_VERBS
        shown, self.pending = _redact_arg(arg, depth)
        self.short_flag = shown == arg and bool(_SHORT_FLAG.match(arg)) and self.program not in clients.NAMES
        return shown

    def _by_place(self, arg: str, before: str | None, after_short: bool) -> str | None:
        """A bare word masked by its place: a client's positional password, a password after an unknown client's
        short flag, a hasher's plaintext, the secret of ``user:secret`` after any flag; None when none of these."""
        self.words.append(arg)
        if clients.positional(self.program, self.words) or (after_short and password_like(arg)) \
                or clients.hashed(self.program, self.words, before):
            return MASK
        pair = _USER_SECRET.match(arg) if before is not None and before.startswith("-") else None
        if pair and (_CREDENTIALS_FLAG.match(before or "") or _pair_secret(pair.group(2))):
            return f"{pair.group(1)}{MASK}"
        return None

    def _glued(self, arg: str) -> str | None:
        """``-pSECRET`` after a program the table does not know, when what is glued reads as a password."""
        glued = _GLUED_SHORT.match(arg) if self.program not in clients.NAMES else None
        if glued and password_like(glued.group(2)) and "=" not in arg:
            return f"{glued.group(1)}{MASK}"
        return None

    def _client(self, arg: str) -> str | None:
        """The word by the program's own rules (app.core.clients), or None when they say nothing of it."""
        if self.program in clients.USER_SLASH_PASSWORD:
            slash = _USER_SLASH.match(arg)
            if slash and "://" not in arg:
                return f"{slash.group(1)}{MASK}{slash.group(3) or ''}"
        for flag, how in clients.flags_for(self.program, self.words).items():
            if arg == flag:
                if how != "glued":
                    self.pending = how
                return arg
            if arg.startswith(flag) and how in ("glued", "either") and not flag.startswith("--"):
                return flag + MASK
            if flag.startswith("--") and arg.startswith(flag + "="):
                return f"{flag}={_masked_value(arg[len(flag) + 1:], how)}"
        return None


Masked = tuple[str, "str | None"]  # (what to show, how to mask the next argument)


def _redact_arg(arg: str, depth: int) -> Masked:
    flag = _FLAG.match(arg)
    if flag:
        if names_secret(flag.group(2)):
            if flag.group(3) is None:
                return arg, "generic"
            return f"{flag.group(1)}{flag.group(3)[0]}{MASK}", None
        value = flag.group(4)
        if value is not None:  # --env=NAME=VALUE, --set=auth.password=VALUE: the value by itself
            shown, _ = _redact_arg(value, depth)
            return f"{flag.group(1)}{flag.group(3)[0]}{shown}", None
        return _redact_word(arg, depth), None
    assignment = _ASSIGNMENT.match(arg)
    if assignment and names_secret(assignment.group(1)):
        return f"{assignment.group(1)}={MASK}", None
    header = _HEADER.match(arg)
    if header and "://" not in arg and names_secret(header.group(1)):
        scheme = re.match(r"(?:Bearer|Basic|Digest|token)\s+", header.group(2), re.IGNORECASE)
        return f"{header.group(1)}: {scheme.group(0) if scheme else ''}{MASK}", None
    return _redact_word(arg, depth), None


def _redact_word(arg: str, depth: int) -> str:
    """One argument with no secret shape of its own: its free text, and, when it holds several words (a
    command passed to ``sh -c``; not a JSON document), each of them as an argument."""
    text = redact_text(arg)
    if depth < 2 and _SPACE.search(arg.strip()) and not arg.lstrip().startswith(("{", "[")):
        try:  # the words as the shell reads them, before any masking changed their quotes
            words = shlex.split(arg)
        except ValueError:
            words = arg.split()
        masked = redact_argv(words, depth + 1)
        if masked != words:
            return redact_text(" ".join(masked))
    return text


def command_line(argv: Sequence[str], extra: Sequence[re.Pattern[str]] = (), limit: int | None = None) -> str:
    """A redacted, shell-quoted command line for display; ``extra`` patterns mask whatever they match. With
    ``limit``, bounded to that many characters (masked first, so a cut never shows part of a secret)."""
    return joined(redact_argv(argv), extra, limit)


def joined(masked: Sequence[str], extra: Sequence[re.Pattern[str]] = (), limit: int | None = None) -> str:
    """Words already masked (``redact_argv``) as a shell-quoted line, ``extra`` patterns applied, bounded."""
    line = " ".join(shlex.quote(a) if a and not _plain(a) else a for a in masked)
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

    def line(self, masked: Sequence[str], limit: int | None = MAX_COMMAND_CHARS) -> str | None:
        """``command`` of words ``argv`` has masked already (a process's words are masked once)."""
        if self.names_only or not masked:
            return None
        return joined(masked, self.extra, limit)

    def argv(self, argv: Sequence[str]) -> list[str]:
        """The masked argument vector, word by word (extra patterns too): what a program's name is made from, also
        with ``names_only`` (an argv[0] that holds a whole command line, or ``php -d x.password=X``, is masked)."""
        masked = []
        for word in redact_argv(argv):
            for pattern in self.extra:
                word = pattern.sub(MASK, word)
            masked.append(word)
        return masked

    def words(self, argv: Sequence[str], limit: int = MAX_COMMAND_CHARS) -> list[str] | None:
        """The masked argument vector, each word bounded to ``limit`` characters; None with ``names_only``."""
        if self.names_only or not argv:
            return None
        return [bounded(word, limit) for word in self.argv(argv)]

    def text(self, text: str) -> str:
        """Free text (an alert's message on its way out): URL credentials, secret parameters, extra patterns."""
        text = redact_text(text)
        for pattern in self.extra:
            text = pattern.sub(MASK, text)
        return text


# letters and digits (``\w`` is str.isalnum() and "_") and the punctuation a shell leaves alone
_PLAIN = re.compile(r"[\w\-./:=,@%+*]*")
_SPACE = re.compile(r"\s")  # str.isspace()'s characters


def _plain(arg: str) -> bool:
    return _PLAIN.fullmatch(arg) is not None
