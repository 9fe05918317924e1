"""Secrets in free text and in the words of a command line, by their shape: a name that says secret, URL
credentials and secret parameters, scheme credentials, secret-named keys of JSON, YAML-ish and ``key=value`` text,
``domain/user:X@host``, SQL's password literals, known token prefixes and high-entropy words; and the string literals
of inline code. ``app.core.redact`` walks a command line's words and applies these (docs: its docstring)."""

from __future__ import annotations

import itertools
import re

MASK = "****"

# A word of a name that *is* one of these says secret ...
_SECRET_WORDS = frozenset({
    "password", "passwd", "passphrase", "pass", "pwd", "pw", "token", "secret", "key", "apikey", "credential",
    "credentials", "auth", "authorization", "cookie", "session", "pat", "sig", "signature", "otp",
})
# ... and so does a word that *ends* with one of these (PGPASSWORD, MYTOKEN, APIKEY; also --monkey: masking a
# harmless value is the cheaper mistake).
_SECRET_ENDINGS = ("password", "passwd", "passphrase", "secret", "token", "credential", "credentials", "key")

_SCHEME_AUTH = re.compile(r"(\b(?:Bearer|Basic|Digest|token)\s+)([A-Za-z0-9._~+/=-]{4,})", re.IGNORECASE)
# the password runs to the last ``@`` before the host: it may hold ``/`` and ``@`` (masking a path is the cheaper
# mistake)
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]*:)(\S+)(@)(?=[^\s@/]+)", re.IGNORECASE)
_SCHEME_WORD = re.compile(r"(?:Bearer|Basic|Digest|token)\s", re.IGNORECASE)
_QUERY_PARAM = re.compile(r"([?&;#]([A-Za-z][\w.-]*)=)([^&#\s;]+)")  # a fragment's too (#access_token=)
# user-info with no password: ``https://TOKEN@host`` (a login of ssh-like schemes is a user name, not a secret)
_URL_USER = re.compile(r"(\b(?!(?:ssh|sftp|scp|git\+ssh|ssh\+git)://)[a-z][a-z0-9+.-]*://)([^\s:/@]+)(@)",
                       re.IGNORECASE)
# ``"key": "value"`` / ``key: value`` / ``key=value`` inside text (JSON, YAML-ish, a config string)
_KEY_VALUE = re.compile(r"""(["']?)((?:[A-Za-z_]|\\u[0-9a-fA-F]{4})(?:[\w.-]|\\u[0-9a-fA-F]{4})*)\1"""
                        r"""(\s*[:=]\s*)(?!(?:Bearer|Basic|Digest|token)\s)"""
                        r"""("(?:[^"\\]|\\.)*"|'[^']*'|[^\s,;}\]&"']+)""")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_ESCAPE = re.compile(r"\\u([0-9a-fA-F]{4})")
# tokens known by their prefix, wherever they stand (Slack, GitHub, GitLab, AWS keys, OpenAI, Stripe, Hugging Face,
# npm, PyPI, Google, JWTs)
_TOKEN = re.compile(r"(?<![A-Za-z0-9])(?:xox[abposr]-[A-Za-z0-9-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|"
                    r"github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{16,}|(?:AKIA|ASIA)[0-9A-Z]{16}|"
                    r"sk-[A-Za-z0-9_-]{16,}|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}|hf_[A-Za-z0-9]{16,}|"
                    r"npm_[A-Za-z0-9]{20,}|pypi-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,}|ya29\.[0-9A-Za-z_-]{16,}|"
                    r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{4,})")

_WORD = re.compile(r"[A-Za-z0-9+/_=-]{20,}")
_FLAG_VALUE = re.compile(r"(?<!\S)(-{1,2}([A-Za-z][\w.-]*))(\s+)(?!-)([^\s'\"]+)")

# domain/user:password@host (impacket, smbmap, crackmapexec)
_DOMAIN_USER = re.compile(r"(?<![\w/:.-])([\w.-]+/[\w.$-]+:)([^\s@]+)(@[\w.-]+)")
# SQL: CREATE USER u IDENTIFIED BY 'x' (Oracle, MySQL), ALTER ROLE u WITH PASSWORD 'x' (PostgreSQL)
_SQL_PASSWORD = re.compile(r"(\bIDENTIFIED\s+BY\s+(?:PASSWORD\s+)?|(?<![\"'\w])PASSWORD(?:\s*=\s*|\s+)(?=['\"]))"
                           r"('(?:[^']|'')*'|\"[^\"]*\"|[^\s,;)'\"]+)", re.IGNORECASE)
_LITERAL = re.compile(r"""('|")((?:(?!\1)[^\\]|\\.){6,}?)\1""")  # a string literal of inline code

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
    if "@" in text and "/" in text and ":" in text:
        text = _DOMAIN_USER.sub(rf"\g<1>{MASK}\g<3>", text)
    if "IDENTIFIED" in text.upper() or "PASSWORD" in text.upper():
        text = _SQL_PASSWORD.sub(_mask_sql, text)
    if "-" in text and any(c.isspace() for c in text):  # ``--password X`` in a sentence (a notification's text)
        text = _FLAG_VALUE.sub(lambda m: f"{m.group(1)}{m.group(3)}{MASK}" if names_secret(m.group(2))
                               and m.group(4) != MASK else m.group(0), text)
    if len(text) >= 13:  # the shortest known token: xoxb- and 8 more
        text = _TOKEN.sub(MASK, text)
    if len(text) >= 20:
        text = _WORD.sub(lambda m: MASK if high_entropy(m.group(0)) else m.group(0), text)
    return text

def _mask_sql(match: re.Match[str]) -> str:
    value = match.group(2)
    return f"{match.group(1)}{value[0]}{MASK}{value[0]}" if value[0] in "'\"" else f"{match.group(1)}{MASK}"

def inline_code(code: str) -> str:
    """Inline code with its string literals of 6 or more characters masked: ``login('admin', '****')``."""
    return _LITERAL.sub(lambda m: f"{m.group(1)}{MASK}{m.group(1)}" if m.group(2) != MASK else m.group(0), code)

def _mask_key_value(match: re.Match[str]) -> str:
    quote, key, separator, value = match.group(1), match.group(2), match.group(3), match.group(4)
    plain = _ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), key)  # JSON's "pass\u0077ord" is "password"
    if not names_secret(plain) or value == MASK or value.strip("\"'") == MASK:
        return match.group(0)
    shown = f"{value[0]}{MASK}{value[0]}" if value[0] in "\"'" else MASK
    return f"{quote}{key}{quote}{separator}{shown}"

def high_entropy(word: str) -> bool:
    """A word that reads as random: a run of 16 or more letters and digits between separators, with upper and lower
    case and digits, switching between them at least every other character. A model name
    (``DeepSeek-R1-Distill-Qwen-32B``) or a path is made of short runs; a hash or a UUID has no upper case."""
    longest = max(re.split(r"[-_/+=.]", word), key=len)
    if len(longest) < 16 or not longest.isalnum():
        return False
    if not (any(c.islower() for c in longest) and any(c.isupper() for c in longest)
            and any(c.isdigit() for c in longest)):
        return False
    kinds = [0 if c.islower() else 1 if c.isupper() else 2 for c in longest]
    return sum(a != b for a, b in itertools.pairwise(kinds)) >= 0.45 * (len(longest) - 1)

def password_like(word: str) -> bool:
    """A word after a short flag that reads as a password: 6 or more characters, letters with digits or symbols,
    no path, file, host or number."""
    if len(word) < 6 or any(c in word for c in "/.:=@ ") or word.isdigit() or word.startswith("-"):
        return False
    return any(c.isalpha() for c in word) and any(not c.isalpha() for c in word)
