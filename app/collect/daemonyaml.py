"""A fan daemon's YAML configuration (thinkfan's, fan2go's) loaded within bounds, every scalar as text, and what
its readers return: the outputs it declares, or why it declares none. A configuration pasted among other text (a
prompt and its ``cat`` line, a heading, the daemon's log after it) is loaded from its first top-level key to the first
line that is neither indented, a list item, a comment, nor another top-level key."""

from __future__ import annotations

import re

from ..core.jsonvalue import Json, JsonObject, member
from ..core.record import record
from .fancontrol import Declared

YAML_MAX_DEPTH = 32  # thinkfan's and fan2go's deepest real nesting is 4
YAML_EXPANDED_LIMIT = 1_000_000  # characters, aliases expanded: a real configuration is under 10,000
_TOP_KEY = re.compile(r"^[A-Za-z_][\w-]*\s*:(\s|$)")


@record
class Read:
    declared: tuple[Declared, ...]
    error: str | None = None


def text_at(value: Json, key: str) -> str | None:
    found = member(value, key)
    return found if isinstance(found, str) else None


def _bounded(source: str, loader: type) -> str | None:
    """Why ``source`` is not loaded: nested deeper than YAML_MAX_DEPTH, or larger than YAML_EXPANDED_LIMIT once its
    aliases are expanded (a few dozen aliases, each naming the last twice, stand for gigabytes). Found from its
    events, before anything is built: each anchor's expanded size is counted once and added at each alias."""
    import yaml  # here: a one-shot answer that reads no configuration does not pay for PyYAML

    sizes: dict[str, int] = {}
    stack: list[tuple[str | None, int]] = [(None, 0)]  # the open collections: (anchor, expanded size so far)
    for event in yaml.parse(source, Loader=loader):
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            stack.append((event.anchor, 1))
            if len(stack) > YAML_MAX_DEPTH:
                return f"nested deeper than {YAML_MAX_DEPTH} levels: not read"
            continue
        if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)) and len(stack) > 1:
            anchor, size = stack.pop()
            if anchor:
                sizes[anchor] = size
        elif isinstance(event, yaml.ScalarEvent):
            size = len(event.value) + 1
            if event.anchor:
                sizes[event.anchor] = size
        elif isinstance(event, yaml.AliasEvent):
            size = sizes.get(event.anchor or "", 1)
        else:
            continue
        anchor, total = stack[-1]
        stack[-1] = (anchor, total + size)
        if total + size > YAML_EXPANDED_LIMIT:
            return f"larger than {YAML_EXPANDED_LIMIT:,} characters once its aliases are expanded: not read"
    return None


def _loader() -> type:
    """PyYAML's libyaml parser where it was built with it (ten times the pure-Python one's speed), else that one;
    both BaseLoader: every scalar a string, no object built."""
    import yaml

    fast: type | None = getattr(yaml, "CBaseLoader", None)
    return fast if fast is not None else yaml.BaseLoader


def load(source: str, loader: type | None = None) -> tuple[JsonObject | None, str | None]:
    """``source`` read, or why not. A file libyaml refuses is read again by the pure-Python parser, whose reasons
    are the ones said (libyaml scans ahead and stops a deep nesting at its own limit, with its own words)."""
    import yaml

    chosen = loader or _loader()
    try:
        refused = _bounded(source, chosen)
        if refused:
            return None, refused
        # every scalar as text, as thinkfan's yaml-cpp reads it: YAML 1.1 would turn a PCI address "01:00.0" into 3600.0
        loaded = yaml.load(source, Loader=chosen)  # a BaseLoader builds no objects
    except yaml.YAMLError as error:
        if chosen is not yaml.BaseLoader:
            return load(source, yaml.BaseLoader)
        return None, f"not YAML: {str(error).splitlines()[0]}"
    if not isinstance(loaded, dict):
        return None, "not a mapping of sensors, fans and levels"
    return loaded, None


def number(value: Json) -> float | None:
    try:
        return float(value) if isinstance(value, str) else None
    except ValueError:
        return None


def yaml_block(text: str) -> str | None:
    """The YAML configuration inside ``text`` (see the module's docstring); None where no top-level key starts one."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if _TOP_KEY.match(line)), None)
    if start is None:
        return None
    kept = []
    for line in lines[start:]:
        if line.strip() and not (line[0] in " \t-#" or _TOP_KEY.match(line)):
            break
        kept.append(line)
    return "\n".join(kept)


MAX_CUTS = 16  # the paragraphs of a paste tried as the configuration's end: a post has a few


def load_pasted(text: str) -> tuple[JsonObject | None, str | None]:
    """``text`` loaded whole, else the configuration inside it (``yaml_block``), or why neither loads. Where the
    block does not load, it is cut at its blank lines, from the last, for a configuration that another output
    follows after a blank line (a daemon's indented log lines under it)."""
    config, error = load(text)
    if config is not None:
        return config, None
    block = yaml_block(text)
    if block is None or (block == text and "\n\n" not in text.strip()):
        return None, error
    lines = block.split("\n")
    blanks = [i for i, line in enumerate(lines) if not line.strip()][::-1][:MAX_CUTS]
    first: str | None = None  # why the whole block does not load: what is said where no cut loads either
    for end in (len(lines), *blanks):
        config, cut_error = load("\n".join(lines[:end]))
        if config is not None:
            return config, None
        first = first or cut_error
    return None, first or error
