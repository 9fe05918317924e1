"""How a setting is declared: once, beside its field in ``Settings``.

A declaration carries everything said about a setting: its environment variable, its flag (if the command line
offers one), how its text is read, its range or choices, its default as people read it, and its help. The loader
(app.collect.config), the command line's flags (app.cli.arguments), the start-up refusals and the table in
docs/CONFIGURATION.md are all made from these declarations, so a setting is written in one place.
"""

from __future__ import annotations

import math
from dataclasses import Field, field
from typing import Callable, TypeVar

from ..core.record import record

T = TypeVar("T")
_KEY = "fanwhy"  # the key of a field's metadata that holds its declaration

SWITCH = {"on": True, "off": False, "true": True, "false": False, "yes": True, "no": False, "1": True, "0": False}


def read_switch(text: str) -> bool:
    value = SWITCH.get(text.strip().lower())
    if value is None:
        raise ValueError(f"must be on or off, got {text!r}")
    return value


def read_list(separator: str) -> Callable[[str], tuple[str, ...]]:
    def read(text: str) -> tuple[str, ...]:
        return tuple(filter(None, (item.strip() for item in text.split(separator))))
    return read


def _number(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def read(text: str) -> int | float:
        try:
            return kind(text)
        except ValueError:
            what = "a whole number" if kind is int else "a number"
            raise ValueError(f"must be {what}, got {text!r}") from None
    return read


@record
class Declared:
    """One setting, said once (see the module's docstring)."""

    env: str  # its environment variable
    help: str  # what it does: the flag's --help and the docs' "meaning" (backticks are for the docs)
    read: Callable[[str], object]  # its text (environment, flag) as its type; a ValueError says what is wrong,
    # in words that follow the variable's name ("must be on or off, got 'maybe'")
    flag: str | None = None  # its command-line flag, when it has one
    metavar: str = "VALUE"
    low: float = -math.inf  # a number's range, both ends included
    high: float = math.inf
    choices: tuple[str, ...] = ()  # a word's choices
    unit: str = ""  # "seconds", said in a refusal of a number out of range
    why: str = ""  # appended to that refusal
    shown: str | None = None  # the default as people read it, when its value does not say it
    more: str = ""  # the docs' further words, after ``help``
    from_file: bool = False  # a secret that may also come from a file (ENV_FILE)
    repeat: bool = False  # the flag may be given again and again, each value added to the variable's list

    def refusal(self, value: object) -> str | None:
        """Why ``value`` is refused by this declaration's range or choices; None when it is in them."""
        if self.choices and value not in self.choices:
            return f"{self.env} must be one of {', '.join(self.choices)}; got {value!r}"
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not self.low <= value <= self.high:
            unit = f" {self.unit}" if self.unit else ""
            if math.isinf(self.high):
                span = f"at least {plain(self.low)}{unit}"
            else:
                span = f"between {plain(self.low)} and {plain(self.high)}{unit}"
            return f"{self.env} must be {span}{self.why}, got {plain(value)}"
        return None


def plain(number: float) -> str:
    """A number as people write it: 3600, 0.05 (not 3600.0)."""
    return f"{number:g}" if isinstance(number, float) else str(number)


def setting(default: T, env: str, help: str, *, kind: type | None = None, separator: str = ",",
            flag: str | None = None, metavar: str = "VALUE", low: float = -math.inf, high: float = math.inf,
            choices: tuple[str, ...] = (), unit: str = "", why: str = "", shown: str | None = None, more: str = "",
            from_file: bool = False, repeat: bool = False) -> T:
    """A field of ``Settings`` with its declaration: ``port: int = setting(8090, "FANWHY_PORT", "port", ...)``.
    How its text is read follows its type (``kind`` where the default is None): a switch, a list split at
    ``separator``, a number, or the text itself."""
    kind = kind or type(default)
    read: Callable[[str], object]
    if kind is bool:
        read = read_switch
    elif kind is tuple:
        read = read_list(separator)
    elif kind is int or kind is float:
        read = _number(kind)
    else:
        read = str
    said = Declared(env=env, help=help, read=read, flag=flag, metavar=metavar, low=low, high=high, choices=choices,
                    unit=unit, why=why, shown=shown, more=more, from_file=from_file,
                    repeat=repeat)
    return field(default=default, metadata={_KEY: said})


def declared(item: Field[object]) -> Declared:
    """The declaration of a field of ``Settings``."""
    found = item.metadata.get(_KEY)
    if not isinstance(found, Declared):
        raise TypeError(f"Settings.{item.name} is not declared with setting()")
    return found


def shown(item: Field[object]) -> str:
    """A field's default as people read it: on/off, unset, 3600 (not 3600.0)."""
    said = declared(item)
    if said.shown is not None:
        return said.shown
    value = item.default
    if isinstance(value, bool):
        return "on" if value else "off"
    if value in (None, "", ()):
        return "unset"
    return plain(value) if isinstance(value, (int, float)) else str(value)
