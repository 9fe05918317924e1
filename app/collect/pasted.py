"""What a paste carries that its tool did not print, taken off before any reader sees it: a forum's or an issue
tracker's markup (Markdown code fences, ``<details>``/``<summary>``/``<pre>`` tags, BBCode's ``[code]``, HTML entities
such as ``&deg;``) and the indentation a Markdown code block adds (four spaces before every line of a paragraph).
What is left is the text as the tool wrote it."""

from __future__ import annotations

import html
import re
import textwrap

# a line that is only markup: a fence (```console, ~~~), a tag of a folded section or preformatted block, BBCode
_MARKUP_LINE = re.compile(r"^\s*(?:(?:```|~~~)[\w+-]*|</?(?:details|pre|code)>|<summary>.*?</summary>|"
                          r"\[/?code(?:=\w+)?\])\s*$", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:#\d{1,5}|#x[0-9a-f]{1,4}|[a-z]{2,8});", re.IGNORECASE)


def cleaned(text: str) -> str:
    """``text`` without the markup a forum added around what a tool printed."""
    if _ENTITY.search(text):
        text = _ENTITY.sub(lambda m: html.unescape(m.group(0)), text)
    lines = [line for line in text.split("\n") if not _MARKUP_LINE.match(line)]
    return "\n\n".join(textwrap.dedent(paragraph) for paragraph in "\n".join(lines).split("\n\n"))
