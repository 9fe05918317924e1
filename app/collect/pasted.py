"""What a paste carries that its tool did not print, taken off before any reader sees it: a forum's or an issue
tracker's markup (Markdown code fences, ``<details>``/``<summary>``/``<pre>`` tags, BBCode's ``[code]``, HTML entities
such as ``&deg;``, the bold a poster put on a line: ``**`` or ``[b]``, HTML's ``<br>`` at each line's end, as a page's
source carries it), the indentation a Markdown code block adds
(four spaces before every line of a paragraph) and the blank line a page puts after every line when it sets each as a
paragraph. What is left is the text as the tool wrote it."""

from __future__ import annotations

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
# HTML's line break, as a page's source (or a scraped post) ends each line with it: one line end, whether or not the
# text's own line end follows it
_BREAK = re.compile(r"<br\s*/?>[ \t]*\r?\n?", re.IGNORECASE)


def cleaned(text: str) -> str:
    """``text`` without the markup a forum added around what a tool printed."""
    if _ENTITY.search(text):
        text = _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    text = _BREAK.sub("\n", _EMPHASIS.sub("", text))
    lines = [line for line in text.split("\n") if not _MARKUP_LINE.match(line)]
    if _double_spaced(lines):  # a page that set each line as a paragraph: a blank line after every line
        lines = "\n".join(lines).replace("\n\n", "\n").split("\n")
    return "\n\n".join(_unindented(paragraph) for paragraph in "\n".join(lines).split("\n\n"))


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
