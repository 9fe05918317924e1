"""Settings loaded from FANWHY_* environment variables and flags, and checked once, at start: each as its
declaration says (app.collect.settings), then the rules that span several."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import fields, replace
from typing import Any, Mapping

from ..core.tokens import weakness
from .declare import declared
from .settings import Settings

# a path prefix (FANWHY_BASE_PATH, or X-Forwarded-Prefix from a trusted proxy): /fanwhy, /tools/fanwhy; no empty,
# "." or ".." segment, no trailing /
BASE_PATH = re.compile(r"(/(?!\.+(?:/|$))[A-Za-z0-9._~-]+)+")
MIN_PUBLIC_TOKEN = 16  # characters of FANWHY_TOKEN needed to bind anything but loopback
# What the declarations say, by setting (app.collect.settings): the variable's name, and the rest.
DECLARED = {item.name: declared(item) for item in fields(Settings)}
ENV_NAMES = {name: said.env for name, said in DECLARED.items()}
# Secrets that may also come from a file (FANWHY_TOKEN_FILE=/run/secrets/...): one source of truth shared with the
# Prometheus that scrapes (credentials_file), and no secret in the process environment.
FROM_FILE = tuple(name for name, said in DECLARED.items() if said.from_file)
MAKE_TOKEN = "Make one with: openssl rand -hex 16 (or: python3 -c 'import secrets; print(secrets.token_hex(16))')"


class ConfigError(ValueError):
    """A setting has a value FanWhy cannot use; the message names it (by its environment variable), and
    ``setting`` is the Settings field, so a command line can name the flag the user actually typed."""

    def __init__(self, message: str, setting: str | None = None):
        super().__init__(message)
        self.setting = setting

    def named(self, flags: Mapping[str, str]) -> str:
        """The message, with the environment variable replaced by the flag when the value came from a flag."""
        message = str(self)
        if self.setting is not None and self.setting in flags:
            env, flag = ENV_NAMES.get(self.setting, "\0"), flags[self.setting]
            message = message.replace(f"{env}=", f"{flag} ").replace(env, flag)
        return message


def validate(settings: Settings) -> Settings:
    """``settings``, or ConfigError naming the first setting that is wrong and what would do: first each
    declaration's range and choices, then the rules that span settings or look outside them."""
    for item in fields(Settings):
        refusal = DECLARED[item.name].refusal(getattr(settings, item.name))
        if refusal is not None:
            raise ConfigError(refusal, item.name)
    _check_tokens(settings)
    _check_proxy(settings)
    _check_masks(settings)
    _check_files(settings)
    if not is_loopback(settings.host) and len(settings.token or "") < MIN_PUBLIC_TOKEN:
        raise ConfigError(
            f"refusing to bind {settings.host}: anything but loopback needs FANWHY_TOKEN of at least "
            f"{MIN_PUBLIC_TOKEN} characters, or keep FANWHY_HOST=127.0.0.1. {MAKE_TOKEN}", "host")
    return settings


def _check_tokens(settings: Settings) -> None:
    """A token is a secret someone types or pastes: no spaces around it (a pasted newline, a quoted blank), at
    least MIN_PUBLIC_TOKEN characters that are not spaces (16 spaces are not a secret), not a placeholder
    published in this project's files (deploy/kubernetes/secret.yaml's, the docs' examples), and a secret by
    app.core.tokens' rule (no unexpanded shell text, no repeated character or run, at least 64 bits)."""
    for name in FROM_FILE:
        value = getattr(settings, name)
        if value is None:
            continue
        variable = ENV_NAMES[name]
        if value.strip().lower() in PUBLISHED_TOKENS or value.strip().lower().startswith("replace-me"):
            raise ConfigError(f"{variable} is the placeholder published in FanWhy's files, not a secret. "
                              f"{MAKE_TOKEN}", name)
        if value != value.strip():
            raise ConfigError(f"{variable} must not begin or end with spaces or line breaks: remove them", name)
        if sum(not c.isspace() for c in value) < MIN_PUBLIC_TOKEN:
            raise ConfigError(f"{variable} needs at least {MIN_PUBLIC_TOKEN} characters that are not spaces. "
                              f"{MAKE_TOKEN}", name)
        reason = weakness(value)
        if reason is not None:
            raise ConfigError(f"{variable} is not a secret: it {reason}. {MAKE_TOKEN}", name)


def _check_masks(settings: Settings) -> None:
    if not settings.mask_patterns:
        return  # the masking rules (19 regular expressions) load with the collector, after a one-shot's baseline
    from ..core.redact import compile_patterns

    try:
        compile_patterns(settings.mask_patterns)
    except ValueError as error:
        raise ConfigError(f"FANWHY_MASK_PATTERNS: {error}") from None


def _check_proxy(settings: Settings) -> None:
    for item in settings.trusted_proxies:
        try:
            ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ConfigError(f"FANWHY_TRUSTED_PROXIES: {item!r} is not an address or a network (e.g. "
                              "127.0.0.1 or 10.0.0.0/8)", "trusted_proxies") from None
    if settings.base_path and not BASE_PATH.fullmatch(settings.base_path):
        raise ConfigError(f"FANWHY_BASE_PATH must be a path such as /fanwhy (letters, digits, - _ . / after a "
                          f"leading /, no trailing /), got {settings.base_path!r}", "base_path")


def _check_files(settings: Settings) -> None:
    if bool(settings.tls_cert) != bool(settings.tls_key):
        raise ConfigError("FANWHY_TLS_CERT and FANWHY_TLS_KEY go together")
    for path in filter(None, (settings.tls_cert, settings.tls_key)):
        if not os.path.isfile(path):
            raise ConfigError(f"TLS file {path!r} does not exist")
    if not os.path.isdir(settings.host_proc):
        raise ConfigError(f"FANWHY_HOST_PROC={settings.host_proc!r} is not a directory (mount the host's /proc "
                          "there)")


def is_wildcard(host: str) -> bool:
    """A bind to every address of the machine (0.0.0.0, ::), not to one of them."""
    return host in ("0.0.0.0", "::", "[::]", "")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _typed(name: str, raw: object) -> object:
    """A setting's text (environment, flag) as its type, read once, at load, as its declaration says; a value
    that is already typed (a flag's, a test's) is kept."""
    if isinstance(raw, list):
        return tuple(str(item) for item in raw)
    if not isinstance(raw, str) or DECLARED[name].read is str:
        return raw
    try:
        return DECLARED[name].read(raw)
    except ValueError as error:
        raise ConfigError(f"{ENV_NAMES[name]} {error}", name) from None


# tokens that appear in this project's files as examples: anyone can read them, so none of them is a secret
PUBLISHED_TOKENS = frozenset({"replace-me-with-32-hex-characters"})


def _read_secret(variable: str, path: str, setting: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            value = handle.read().strip()
    except OSError as error:
        raise ConfigError(f"{variable}={path!r} cannot be read: {error.strerror}", setting) from None
    if not value:
        raise ConfigError(f"{variable}={path!r} is empty", setting)
    return value


def load_settings(env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
    """Defaults, then the environment, then explicit overrides (command-line flags)."""
    env = os.environ if env is None else env
    values: dict[str, Any] = {}  # typed by each declaration's reader
    for name, variable in ENV_NAMES.items():
        raw = overrides.get(name)
        if raw is None and env.get(variable, "") != "":
            raw = env[variable]
        if raw is None and name in FROM_FILE and env.get(variable + "_FILE"):
            raw = _read_secret(variable + "_FILE", env[variable + "_FILE"], name)
        if raw is not None:
            values[name] = _typed(name, raw)
    return validate(replace(Settings(), **values))
