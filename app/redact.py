"""Secret masking for command lines: the one place, applied before any output.

Masks the values of flags that name a secret (``--password=x``, ``--token x``, ``--api-key x``),
environment-style assignments (``AWS_SECRET_ACCESS_KEY=x``, ``*_TOKEN=x``), ``Bearer x`` and the
password in ``scheme://user:pass@host``.
"""

from __future__ import annotations

import re
import shlex
from typing import Sequence

MASK = "****"

_SECRET_SEGMENTS = frozenset({
    "password", "passwd", "passphrase", "pass", "pwd", "pw", "token", "secret", "key", "apikey",
    "credential", "credentials", "auth", "authorization", "cookie", "session",
})
_FLAG = re.compile(r"^(-{1,2}([A-Za-z][\w.-]*))(=(.*))?$", re.DOTALL)
_ASSIGNMENT = re.compile(r"^([A-Za-z_][\w.-]*)=(.*)$", re.DOTALL)
_BEARER = re.compile(r"(\b(?:Bearer|Basic|token)\s+)([A-Za-z0-9._~+/=-]{4,})", re.IGNORECASE)
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]+)(@)", re.IGNORECASE)


def names_secret(name: str) -> bool:
    """True when one word of a flag or variable name says it holds a secret (HF_TOKEN, --db-password)."""
    return any(part in _SECRET_SEGMENTS for part in re.split(r"[-_.]", name.lower()))


def redact_text(text: str) -> str:
    """Mask secrets inside free text (one argument, or a whole command line)."""
    text = _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<3>", text)
    return _BEARER.sub(rf"\g<1>{MASK}", text)


def redact_argv(argv: Sequence[str]) -> list[str]:
    """Mask the secret values in an argument vector; the flag names stay readable."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        flag = _FLAG.match(arg)
        if flag and names_secret(flag.group(2)):
            if flag.group(3) is None:
                out.append(arg)
                mask_next = True
            else:
                out.append(f"{flag.group(1)}={MASK}")
            continue
        assignment = _ASSIGNMENT.match(arg)
        if assignment and not flag and names_secret(assignment.group(1)):
            out.append(f"{assignment.group(1)}={MASK}")
            continue
        out.append(redact_text(arg))
    return out


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


def _plain(arg: str) -> bool:
    return all(c.isalnum() or c in "-_./:=,@%+*" for c in arg)
