"""Whether a token is a secret: the one rule FANWHY_TOKEN and FANWHY_METRICS_TOKEN are held to at start.

A token that is not a secret is worse than none: it reads as protection. What people actually put there, when they
mean to put a secret, is what this refuses:
- **shell text that never ran**: ``$(openssl rand -hex 16)`` in an env file, a compose ``.env`` or a systemd unit,
  none of which runs a command (``$(``, ``${``, a backtick);
- **one repeated character, one run or one short pattern**: ``aaaa…``, ``0123456789abcdef``, ``1111222233334444``,
  ``abcabc…``;
- **placeholder words** (``REPLACE_ME``, ``your-token-here``, ``changeme``): each counts as nothing towards the
  estimate below, so a token that is mostly such words is refused, while a random token that happens to hold
  three letters of one is not;
- **under 64 bits by estimate**: the characters left (placeholder words taken out; in a token that is not pure hex,
  a run of four or more counts as two characters) times the bits of the character classes the token uses
  (hex digits alone: 4 bits; otherwise lower case 26, upper case 26, digits 10 and other printable characters 33,
  added up).

What the docs tell people to make is never refused: ``openssl rand -hex 16`` (128 bits), ``-hex 8`` (exactly 64,
judged by the whole-token rules only), ``-base64 16``, a password manager's 20 characters.
tests/integration/test_tokens.py draws 100,000 of each.
"""

from __future__ import annotations

import itertools
import math
import re
import string
from collections import Counter

MIN_BITS = 64
SHELL_TEXT = ("$(", "${", "`")
# the words people write where a secret should go; matched in any case
PLACEHOLDER_WORDS = ("replace", "change", "your", "token", "example", "xxx", "here", "secret", "password",
                     "placeholder", "insert", "dummy", "sample", "todo", "fixme", "me")
_WORDS = re.compile("|".join(sorted(PLACEHOLDER_WORDS, key=len, reverse=True)), re.IGNORECASE)
_ORDER = {c: i for i, c in enumerate(string.digits + string.ascii_lowercase)}  # 9 is followed by a, as in hex
_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_RUN_SHARE = 0.75  # a token whose steps are mostly +1, -1 or 0 is one run (a random token's are about 1 in 5)
_CLASSES = ((string.ascii_lowercase, 26), (string.ascii_uppercase, 26), (string.digits, 10))
_OTHER = 33  # printable ASCII that is neither a letter nor a digit (space included)


def _steps(text: str) -> list[int | None]:
    """The difference between each character and the next in 0-9a-z order (None where either is not in it)."""
    keys = [_ORDER.get(c) for c in text.lower()]
    return [None if a is None or b is None else b - a for a, b in itertools.pairwise(keys)]


def _one_run(text: str) -> bool:
    steps = _steps(text)
    return bool(steps) and sum(s is not None and abs(s) <= 1 for s in steps) >= _RUN_SHARE * len(steps)


def _period(text: str) -> int | None:
    """The shortest unit the whole text repeats (``abcabcab`` -> 3), if it repeats one at least twice."""
    for unit in range(1, len(text) // 2 + 1):
        if text[unit:] == text[:-unit]:  # every character equals the one ``unit`` before it
            return unit
    return None


def _run_excess(text: str) -> int:
    """Characters to leave out of the count: each run of four or more (+1, -1 or 0 steps) counts as two."""
    excess = length = 0
    for step in [*_steps(text), None]:
        if step is not None and abs(step) <= 1:
            length += 1
            continue
        if length + 1 >= 4:
            excess += length + 1 - 2
        length = 0
    return excess


def _alphabet(text: str) -> int:
    if _HEX.fullmatch(text):
        return 16
    size = sum(n for chars, n in _CLASSES if any(c in chars for c in text))
    return size + (_OTHER if any(not c.isalnum() or not c.isascii() for c in text) else 0)


def estimated_bits(token: str) -> float:
    """The estimate the module docstring describes, in bits."""
    if not token:
        return 0.0
    alphabet = _alphabet(token)
    rest = _WORDS.sub("", token)
    count = len(rest) if alphabet == 16 else len(rest) - _run_excess(rest)
    return max(0, count) * math.log2(alphabet)


def weakness(token: str) -> str | None:
    """None for a token that passes, else why it is not a secret (a phrase that follows "it ")."""
    shell = next((s for s in SHELL_TEXT if s in token), None)
    if shell is not None:
        return (f"holds shell text ({shell!r}) that was never run: an env file, a compose .env or a systemd unit "
                "does not run commands; put the token itself there")
    if not token:
        return "is empty"
    most, count = Counter(token).most_common(1)[0]
    if count * 2 > len(token):
        return f"is mostly one repeated character ({most!r})"
    period = _period(token)
    if period is not None:
        return f"repeats one pattern of {period} character{'s' if period > 1 else ''}"
    if _one_run(token):
        return "is one run of characters (like 0123… or abcd…)"
    bits = estimated_bits(token)
    if bits < MIN_BITS:
        words = sorted({w.lower() for w in _WORDS.findall(token)})
        said = f"; it holds the placeholder word{'s' if len(words) > 1 else ''} {', '.join(words)}" if words else ""
        return f"has about {bits:.0f} bits of entropy, under {MIN_BITS}{said}"
    return None
