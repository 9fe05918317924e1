"""Dell's OEM fan commands typed into ipmitool, as people paste what they ran: ``ipmitool [-I lanplus -H ...] raw
0x30 0x30 0x01 0x00`` turns the iDRAC's own fan control off, ``raw 0x30 0x30 0x02 0xff <duty>`` sets every fan (0xff)
to that duty in per cent (hex or decimal), ``raw 0x30 0x30 0x01 0x01`` gives the fans back to the iDRAC; and a
Supermicro BMC's fan mode, ``raw 0x30 0x45 0x01 <mode>`` (smfc's ipmi.py: 0 Standard, 1 Full, 2 Optimal, 3 PUE, 4 Heavy
IO), a setting typed. Dell does
not document them; Dell_iDRAC_fan_controller's functions.sh sends them so (apply_user_fan_control_profile,
apply_Dell_default_fan_control_profile), and ipmitool's issue tracker lists them for 11th-generation servers. Each
command read is a decision, in the paste's order, the last one standing; the paste shows what was typed, not what the
iDRAC did with it, unless ipmitool's refusal is pasted too."""

from __future__ import annotations

import re

from ..facts import ONE_DUTY, Decision, Setting
from .bmcsettings import FAN_MODE
from .idracfc import FIRMWARE, REFUSED, refused_fan_command, refused_raw
from .prompts import BEFORE_COMMAND

TYPED = "ipmitool"  # a Decision's daemon: a command typed by hand, not a daemon's log
_RAW = re.compile(BEFORE_COMMAND + r"(?:sudo\s+)?ipmitool\b[^\n]*?\braw((?:\s+(?:0[xX][0-9a-fA-F]{1,2}|\d{1,3}))+)\s*$",
                  re.MULTILINE)
_MANUAL, _AUTO, _DUTY = (0x30, 0x30, 0x01, 0x00), (0x30, 0x30, 0x01, 0x01), (0x30, 0x30, 0x02, 0xFF)
# a Supermicro BMC's fan mode, set (smfc's ipmi.py, set_fan_mode)
_MODE = (0x30, 0x45, 0x01)
_MODES = {0: "Standard", 1: "Full", 2: "Optimal", 3: "PUE", 4: "Heavy IO"}


def _bytes(words: str) -> tuple[int, ...]:
    return tuple(int(w, 0) if w.lower().startswith("0x") else int(w) for w in words.split())


def decisions(text: str) -> tuple[Decision, ...]:
    """Each duty set for every fan (one duty, the iDRAC's control off), and each hand-back to the iDRAC; a duty
    the iDRAC refused where ipmitool's refusal of a fan command is pasted."""
    if "raw" not in text:  # no command typed: a long paste is not scanned line by line
        return ()
    refused = refused_fan_command(text)
    steps: list[Decision] = []
    for m in _RAW.finditer(text):
        sent = _bytes(m.group(1))
        if sent == _AUTO:
            steps.append(Decision(TYPED, 0.0, 0.0, None, len(steps), why=FIRMWARE, drives="bmc"))
        elif len(sent) == len(_DUTY) + 1 and sent[:4] == _DUTY and sent[4] <= 100:
            steps.append(Decision(TYPED, 0.0, 0.0, None, len(steps), percent=float(sent[4]),
                                  why=REFUSED if refused else ONE_DUTY, drives="bmc"))
    return tuple(steps)


def settings(text: str) -> tuple[Setting, ...]:
    """The last fan mode typed for a Supermicro BMC (raw 0x30 0x45 0x01 <mode>), as a setting typed, not read back;
    none where ipmitool's refusal of that command is pasted."""
    if "raw" not in text or "0x45" in refused_raw(text):
        return ()
    modes = [_MODES[sent[3]] for m in _RAW.finditer(text) if len(sent := _bytes(m.group(1))) == 4 and
             sent[:3] == _MODE and sent[3] in _MODES]
    return (Setting("Supermicro BMC", FAN_MODE, modes[-1], typed=True),) if modes else ()
