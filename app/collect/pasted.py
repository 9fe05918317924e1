"""What a paste carries that its tool did not print, taken off before any reader sees it: the encoding it was saved in
(a byte-order mark, UTF-16), a terminal's colour codes, a reply's quote marks, a forum's or an issue tracker's
markup (Markdown code fences and inline code set line by line, ``<details>``/``<summary>``/``<pre>`` tags, BBCode's
``[code]``, HTML entities such as ``&deg;``, HTML's ``<br>`` at each line's end, the bold a poster put on a line:
``**`` or ``[b]``), the indentation a Markdown code block adds (four spaces before every line of a paragraph), the
blank line a page puts after every line when it sets each as a paragraph, the line numbers ``cat -n`` or ``nl`` put
before each line, the ``host: `` pdsh or clush puts before each line of one host's output, the ISO 8601 time a log
collector puts before each line, what another encoding did to the text (UTF-8 shown through code page 1252, a °
written "?"), the invisible characters a page adds (zero-width spaces, a soft hyphen) and the typographic quotes a
word processor puts in place of plain ones. What is left is the text as the tool wrote it (``as_printed``). Of a
paste far longer than any machine's capture, its start and its end (``windowed``)."""

from __future__ import annotations

import codecs
import html
import itertools
import re
import textwrap

# a line that is only markup: a fence (```console, ~~~), a tag of a folded section or preformatted block, BBCode
_MARKUP_LINE = re.compile(r"^\s*(?:(?:```|~~~)[\w+-]*|</?(?:details|pre|code)>|<summary>.*?</summary>|"
                          r"\[/?code(?:=\w+)?\])\s*$", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:#\d{1,5}|#x[0-9a-f]{1,4}|[a-z]{2,8});", re.IGNORECASE)
# emphasis a poster added inside the lines: Markdown's strong ("**fan2:  0 RPM**") and BBCode's [b], [i], [u]; no
# tool FanWhy reads writes either
_EMPHASIS = re.compile(r"\*\*|\[/?[biu]\]", re.IGNORECASE)
# a line set as inline code, as a poster does line by line where a code block was meant ("`cpu_fan:   0 RPM`")
_INLINE_CODE = re.compile(r"^`([^`\n]*)`\s*$")
# HTML's line break, as a page's source (or a scraped post) ends each line with it: one line end, whether or not the
# text's own line end follows it
_BREAK = re.compile(r"<br\s*/?>[ \t]*\r?\n?", re.IGNORECASE)


def cleaned(text: str) -> str:
    """``text`` without the markup a forum added around what a tool printed."""
    if _ENTITY.search(text):
        text = _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    text = _BREAK.sub("\n", _EMPHASIS.sub("", text))
    lines = _unprefixed(_untimed(_unnumbered([_INLINE_CODE.sub(r"\1", line) for line in text.split("\n")
                                              if not _MARKUP_LINE.match(line)])))
    if _double_spaced(lines):  # a page that set each line as a paragraph: a blank line after every line
        lines = "\n".join(lines).replace("\n\n", "\n").split("\n")
    whole = _unindented("\n".join(lines))  # a paste set as one code block: its own nesting kept (a YAML file's)
    return "\n\n".join(_unindented(paragraph) for paragraph in whole.split("\n\n"))


_NUMBERED = re.compile(r"^ *(\d+)\t")  # cat -n's and nl's line number: right-aligned, then a tab
NUMBERED_MIN = 2  # numbered lines, one after another, before a paste is taken as numbered


def _unnumbered(lines: list[str]) -> list[str]:
    """Lines ``cat -n`` or ``nl`` numbered (from the first numbered line on, every line with text starts with its
    number and a tab, the numbers one after another; the command or a sentence may come before) without their
    numbers; any other text as it is."""
    first = next((i for i, line in enumerate(lines) if _NUMBERED.match(line)), None)
    if first is None:
        return lines
    found = [_NUMBERED.match(line) for line in lines[first:] if line.strip()]
    numbers = [int(m.group(1)) for m in found if m]
    if len(numbers) < max(NUMBERED_MIN, len(found)) or any(b != a + 1 for a, b in itertools.pairwise(numbers)):
        return lines  # nl skips blank lines, cat -n numbers them too: either way one after another
    return lines[:first] + [_NUMBERED.sub("", line, count=1) for line in lines[first:]]


# an ISO 8601 time before a line, as docker logs -t, kubectl logs --timestamps or moreutils' ts -s/-i print it
_STAMP = re.compile(r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]?\s")


def _untimed(lines: list[str]) -> list[str]:
    """Lines a log collector stamped with the time (every line with text starts with an ISO 8601 time) without the
    stamp, a tool's output under it as the tool printed it; any other text as it is (a tool's own stamped lines
    keep theirs where not every line has one)."""
    filled = [line for line in lines if line.strip()]
    if len(filled) < PREFIXED_MIN or not all(_STAMP.match(line) for line in filled):
        return lines
    return [_STAMP.sub("", line, count=1) for line in lines]


# pdsh's, clush's and dsh's "host: " before every line of a command's output on one host (dshbak takes it off)
_HOST = re.compile(r"^([A-Za-z][\w.-]{0,62}): ")
_LABEL = re.compile(r"(?:fan|temp|in|pwm|curr|power|cpu|gpu|core|status|speed|level|debug|info|note|warn|warning|error|"
                    r"critical|fatal|log)\d*", re.IGNORECASE)  # a reading's label or a log level, not a host
PREFIXED_MIN = 3  # lines with one host's prefix before a paste is taken as one host's, through pdsh


def _unprefixed(lines: list[str]) -> list[str]:
    """One host's output through pdsh, clush or dsh (every line with text starts with the same ``host: ``) without
    the prefix; several hosts' (other machines), a prefix that is a reading's own label, or any other text as it is."""
    hosts = {m.group(1) if (m := _HOST.match(line)) else None for line in lines if line.strip()}
    filled = sum(1 for line in lines if line.strip())
    if len(hosts) != 1 or None in hosts or filled < PREFIXED_MIN or _LABEL.fullmatch(next(iter(hosts)) or ""):
        return lines
    return [_HOST.sub("", line, count=1) for line in lines]


CODE_INDENT = 4  # CommonMark: an indented code block's every line starts with four or more spaces


def _unindented(paragraph: str) -> str:
    """A paragraph Markdown set as a code block (every line indented four spaces or more) without that indentation;
    any other paragraph as it is, since a paragraph indented less is the tool's own shape (YAML's nesting after a
    blank line, a continuation line)."""
    lines = [line.expandtabs(CODE_INDENT) for line in paragraph.split("\n") if line.strip()]
    indent = min((len(line) - len(line.lstrip(" ")) for line in lines), default=0)
    return textwrap.dedent(paragraph) if indent >= CODE_INDENT else paragraph


DOUBLE_SPACED_MIN = 4  # lines of text, each followed by a blank one, before a paste is taken as double-spaced


def _double_spaced(lines: list[str]) -> bool:
    """No two lines of text next to each other, and enough of them that it is the paste's spacing, not its shape."""
    filled = [bool(line.strip()) for line in lines]
    return sum(filled) >= DOUBLE_SPACED_MIN and not any(a and b for a, b in itertools.pairwise(filled))


def as_printed(data: bytes) -> str:
    """A capture file's bytes as the text its tool printed: decoded (``decoded_bytes``), without a terminal's codes,
    a reply's quote marks, a forum's markup (``cleaned``) or the damage an encoding did on the way, with sensors'
    locale numbers in the C locale's form."""
    decoded = _ANSI.sub("", decoded_bytes(data)).replace("\r\n", "\n")
    repaired = (_INVISIBLE.sub("", _unmangled(line)).translate(_TYPOGRAPHIC) for line in decoded.split("\n"))
    text = cleaned("\n".join(_unquoted(line) for line in repaired))
    text = _QUESTION_DEGREES.sub(r"\1°", _DEGREES.sub(lambda m: _AS_DEGREES[m.group(0)], text))
    return _THOUSANDS.sub("", _DECIMAL_COMMA.sub(".", text))


def decoded_bytes(data: bytes) -> str:
    """A capture's bytes as text: UTF-8 (a byte-order mark, as Windows' Notepad writes one, taken off), or UTF-16
    where the file says so with its mark or shows it by its zero bytes (Windows PowerShell 5's ``>`` writes a
    command's output as UTF-16 LE)."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    high = data[1::2].count(0)
    if high > len(data) // 4 and data[0::2].count(0) < high // 4:
        return data.decode("utf-16-le", errors="replace")  # no mark: ASCII's every other byte is zero
    return data.decode("utf-8-sig", errors="replace")


# a terminal's colours and cursor moves, as a `script` log or a tool forced to colour keeps them: ESC [ ... letter
# (CSI), ESC ] ... BEL or ESC \ (OSC: a title), ESC ( B (a character set)
# characters a page or an editor adds that no tool prints: zero-width spaces and joiners, a word joiner, a soft hyphen,
# a byte-order mark inside the text (they split a label or a number without showing); and a word processor's or
# forum's typographic quotes in place of the plain ones a configuration file is written with
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\u00ad\ufeff]")
_TYPOGRAPHIC = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'"})
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]")


# UTF-8 that went through Windows' code page 1252 or Latin-1 and was written out again as UTF-8: "├──" as "â”œâ”€â”€",
# "°" as "Â°". Such a line, turned back into those bytes, is valid UTF-8; a line that is not is left as it is.
_MANGLED_MARKS = ("Ã", "Â", "â")


def _unmangled(line: str) -> str:
    if not any(mark in line for mark in _MANGLED_MARKS):
        return line
    try:
        return b"".join(_byte(char) for char in line).decode("utf-8")
    except UnicodeError:
        return line


def _byte(char: str) -> bytes:
    """The byte code page 1252 wrote ``char`` from, or Latin-1's for the five bytes 1252 leaves undefined (Windows
    passes those through as the control characters of the same number)."""
    try:
        return char.encode("cp1252")
    except UnicodeError:
        return char.encode("latin-1")


# How pasted text writes "°" when it went through another encoding or font: "Â°" (UTF-8 read as Latin-1 and
# written again), "\ufffd" (a Latin-1 ° read as UTF-8), "º" and "˚" (look-alikes), "℃"; and no-break spaces
_AS_DEGREES = {"Â°": "°", "\ufffdC": "°C", "\ufffdF": "°F", "º": "°", "˚": "°", "℃": "°C", "℉": "°F", "\u00a0": " ",
               "\u202f": " "}
_DEGREES = re.compile("|".join(re.escape(k) for k in _AS_DEGREES))
# a ° lost to an encoding that has none and written as "?" ("+45.0?C", "113.0?F"): after a number and before the
# scale's letter, nothing else
_QUESTION_DEGREES = re.compile(r"(?<=\d)([ \t]{0,3})\?(?=[CF]\b)")


# sensors prints numbers in the user's locale (it calls setlocale): "+88,0°C", "+0,86 V" where the decimal mark is a
# comma. A comma between digits with one or two digits and a unit after it is that mark ("1,234 RPM" and CSV's
# "12,34,56" are not)
# a fan's speed with a thousands separator ("1,912 RPM", as Windows tools print it): one number
_THOUSANDS = re.compile(r"(?<=\b\d),(?=\d{3}\s*RPM\b)|(?<=\b\d\d),(?=\d{3}\s*RPM\b)", re.IGNORECASE)
_DECIMAL_COMMA = re.compile(r"(?<=\d),(?=\d{1,2}\s*(?:°|C\b|F\b|V\b|mV\b|W\b|A\b|%|RPM\b))")


_QUOTE = re.compile(r"^\s{0,3}(?:>\s?)+")  # a reply's quote marks (Markdown, e-mail): "> status: enabled"


def _unquoted(line: str) -> str:
    """A line without the quote marks a reply put before it: what was quoted is read as it was written."""
    return _QUOTE.sub("", line)


HEAD_CHARS, TAIL_CHARS = 64 << 10, 192 << 10  # of a paste longer than both, what is read: its start and its end
CUT_LINE = "#~ {} characters not read here, of a {} MiB paste (its first {} KiB and its last {} KiB are)"


def windowed(text: str) -> str:
    """A paste longer than HEAD_CHARS + TAIL_CHARS as its start and its end, cut at line breaks, with a line that
    says how much between them was not read: a machine's capture is a few kilobytes, and what is longer is a log or
    a listing run again and again (a `watch` of `sensors` for hours), whose latest part is the current state; every
    reader costs its length, and 4 MiB of one listing took half a minute."""
    if len(text) <= HEAD_CHARS + TAIL_CHARS:
        return text
    head = text.rfind("\n", 0, HEAD_CHARS) + 1
    tail = text.find("\n", len(text) - TAIL_CHARS) + 1
    if head <= 0 or tail <= head:
        return text
    note = CUT_LINE.format(f"{tail - head:,}", f"{len(text) / (1 << 20):.1f}", HEAD_CHARS >> 10, TAIL_CHARS >> 10)
    return text[:head] + note + "\n" + text[tail:]


_CUT = re.compile(r"^#~ \S+ characters not read here, of a (\S+) MiB paste", re.MULTILINE)


def window_said(text: str) -> str:
    """What ``windowed`` read of a paste it cut, as "read as" says it; empty for a paste read whole."""
    cut = _CUT.search(text, 0, HEAD_CHARS + 200)
    return f" (of its {cut.group(1)} MiB, the first {HEAD_CHARS >> 10} KiB and the last {TAIL_CHARS >> 10} KiB)" \
        if cut else ""
