"""The fan wing end to end: a machine's facts through every rule to findings, and the findings into words."""

from __future__ import annotations

from functools import lru_cache

from ..core.finding import Finding
from . import (  # noqa: F401  # each registers its rules with app.fans.rules on import
    rules,
    rules_bmc,
    rules_daemon,
    rules_ec,
    rules_gpu,
    rules_power,
    rules_range,
    rules_read,
    rules_settings,
    rules_state,
    rules_turn,
)
from .facts import Machine
from .words import answer


def findings(machine: Machine) -> list[Finding]:
    """Every finding on ``machine``, the strongest first: the first one leads."""
    return rules.findings(machine)


def explained(machine: Machine) -> tuple[list[Finding], str, list[str]]:
    """(the findings, the sentence, the further causes) for ``machine``."""
    found = findings(machine)
    sentence, also = answer(found, machine)
    return found, sentence, also


@lru_cache(maxsize=4)
def judged(machine: Machine) -> tuple[tuple[Finding, ...], str]:
    """(the findings, their sentence) once per distinct set of facts: the fan service judges a tick's fans and the
    verdict words them from the same facts, and a machine whose fans and temperatures stand still from one tick to
    the next is not ruled on again (the facts are frozen records, equal when their values are)."""
    found, sentence, _also = explained(machine)
    return tuple(found), sentence
