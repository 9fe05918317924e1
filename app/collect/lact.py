"""What LACT (the Linux GPU control daemon, ``/etc/lact/config.yaml``) is configured to do with an AMD card's fan.

Its documentation (its repository's configuration page) and source (``fan_control.rs``): ``gpus`` maps each card's
id (PCI vendor and device, subsystem, slot: ``1002:687F-1043:0555-0000:0b:00.0``) to its settings;
``fan_control_enabled: true`` with ``fan_control_settings`` takes the fan over, otherwise LACT leaves it to the
card. ``mode: static`` holds it at ``static_speed`` (0 to 1) whatever the temperature; ``mode: curve`` follows
``curve`` (temperature to speed, 0 to 1) on the sensor ``temperature_key`` names (``edge`` by default, or
``junction``): linear between two points, the first point's speed below the first, the last's above the last.
``current_profile`` names a profile whose ``gpus`` apply instead, unless ``auto_switch_profiles`` picks one by the
processes running (then the top-level settings are what applies while no rule matches). On RDNA3 and newer cards
LACT hands a custom curve to the card's firmware, which runs it on the hotspot reading whatever ``temperature_key``
says (its maintainer, in its issue tracker); the id's device part would tell the generation, which is not read here,
so the answer says both. Other vendors' cards (NVIDIA's, Intel's) are not read here.
"""

from __future__ import annotations

from ..core.jsonvalue import JsonObject, member
from .daemonyaml import Read, load_pasted, number, text_at
from .fancontrol import Declared

AMD = "1002"  # the PCI vendor id that begins an AMD card's id


def _gpus(config: JsonObject) -> JsonObject:
    """The cards' settings that apply: the current profile's, where one is named and not chosen automatically."""
    profile = text_at(config, "current_profile")
    automatic = str(member(config, "auto_switch_profiles") or "").lower() == "true"
    chosen = member(member(member(config, "profiles"), profile or ""), "gpus") if profile and not automatic else None
    gpus = chosen if isinstance(chosen, dict) else member(config, "gpus")
    return gpus if isinstance(gpus, dict) else {}


def _declared(card: str, settings: JsonObject) -> Declared | None:
    fan = member(settings, "fan_control_settings")
    if str(member(settings, "fan_control_enabled") or "").lower() != "true" or not isinstance(fan, dict):
        return None  # the card's own control
    slot = card.split("-")[-1]
    key = text_at(fan, "temperature_key") or "edge"
    if (text_at(fan, "mode") or "curve") == "static":
        share = number(member(fan, "static_speed"))
        if share is None:
            return None
        return Declared(chip="amdgpu", pwm="pwm1", source_chip=None, source=None, fans=("fan1_input",),
                        curve=((0.0, round(share * 100, 1)),), floor_percent=None, daemon="LACT", stepped=True)
    curve = member(fan, "curve")
    points = sorted((t, round(s * 100, 1)) for t, s in
                    ((number(k), number(v)) for k, v in (curve.items() if isinstance(curve, dict) else ()))
                    if t is not None and s is not None)
    if not points:
        return None
    # LACT's maintainer (its issue tracker): on RDNA3 and newer cards a custom curve is handed to the card's
    # firmware, which runs it on its own (hotspot) reading; the configuration does not say which generation it is
    return Declared(chip="amdgpu", pwm="pwm1", source_chip="amdgpu", source=key, fans=("fan1_input",),
                    curve=tuple(points), floor_percent=points[0][1], daemon="LACT",
                    follows=f"the {key} temperature of the card at {slot}", firmware_may_run=True)


def parse(text: str) -> Read:
    """The fan settings LACT applies to each AMD card it takes the fan of; nothing from a text that is no LACT
    configuration (one with no ``gpus``)."""
    if "fan_control" not in text or "gpus" not in text:
        return Read(())
    config, error = load_pasted(text)
    if config is None:
        return Read((), error)
    found = (_declared(card, settings) for card, settings in _gpus(config).items()
             if card.upper().startswith(AMD) and isinstance(settings, dict))
    return Read(tuple(d for d in found if d is not None))
