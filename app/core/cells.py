"""Untrusted text on a terminal: what a process name or a command line may hold is shown, never obeyed, and laid
out in the cells a terminal gives it.

- **Shown, not obeyed**: control characters (C0 and C1: an escape sequence, a newline, a bell), the format
  characters (Unicode category Cf: the bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069 that turn
  the text after them around, zero-width spaces and joiners) and the line and paragraph separators are written as
  escapes (``\\x1b``, ``\\u202e``), as ``less`` and ``git`` show them, so that what is on screen is what the
  process is called.
- **Everywhere FanWhy speaks**: the terminal's tables, the CLI's error lines and receipts, the log, notification
  bodies and recording labels go through ``shown``; machine answers (the API, ``--json``) keep the text as read,
  escaped by JSON.
- **Cells, not characters**: a wide character (East Asian Width W or F: CJK, most emoji) takes two cells, a
  combining mark none (UAX #11; what ``wcwidth`` counts). Fitting and padding count cells, so a CJK command line
  ends at the column it should.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(text: object) -> str:
    """``text`` with every character that would act on the terminal, or reorder what follows it, escaped."""
    value = str(text)
    if value.isascii() and value.isprintable():
        return value
    return "".join(_escape(ch) if unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch for ch in value)


def shown_lines(text: object) -> str:
    """``text`` as ``shown`` writes it, its line breaks kept (a receipt, a traceback in a log line)."""
    return "\n".join(shown(line) for line in str(text).split("\n"))


@lru_cache(maxsize=4096)
def _cell(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def width(text: str) -> int:
    """The cells ``text`` takes on a terminal (of shown text: escape it first)."""
    return len(text) if text.isascii() else sum(_cell(ch) for ch in text)


def cut(text: str, cells: int) -> str:
    """The longest start of ``text`` that takes at most ``cells`` cells."""
    if text.isascii():
        return text[:max(0, cells)]
    used = 0
    for i, ch in enumerate(text):
        used += _cell(ch)
        if used > cells:
            return text[:i]
    return text


def fit(text: str, cells: int, ellipsis: str = "…") -> str:
    """``text`` in at most ``cells`` cells: cut with ``ellipsis`` at the end when it is longer."""
    if width(text) <= cells:
        return text
    return cut(text, cells - width(ellipsis)) + ellipsis if cells > 0 else ""


def pad(text: str, cells: int, right: bool = False) -> str:
    """``text`` padded with spaces to ``cells`` cells (on the left when ``right``: a number's column)."""
    room = " " * max(0, cells - width(text))
    return room + text if right else text + room


def wrap(text: str, cells: int, lines: int | None = None, indent: str = "", ellipsis: str = "…") -> list[str]:
    """``text`` in lines of at most ``cells`` cells, broken at spaces (a word longer than a line is broken in it;
    the spaces inside a line are kept); lines after the first start with ``indent``. At most ``lines`` lines: the
    last ends with ``ellipsis`` when more was left."""
    out: list[str] = []
    current, gap = "", ""
    for token in re.findall(r"\S+|\s+", text):
        if token.isspace():
            gap = token
            continue
        while token:
            joined = current + gap if current.strip() else current
            if width(joined) + width(token) <= cells:
                current, token = joined + token, ""
            elif current.strip():
                out.append(current)
                current = indent
            else:  # a word wider than a whole line
                piece = cut(token, max(1, cells - width(current)))
                out.append(current + piece)
                current, token = indent, token[len(piece):]
        gap = ""
    if current.strip() or not out:
        out.append(current)
    if lines is not None and len(out) > lines:
        out = out[:lines]
        out[-1] = fit(out[-1] + ellipsis, cells, ellipsis)
    return out
