"""The names a request's Host may carry, and the URL FanWhy prints: from another machine, and in a container."""

from __future__ import annotations

from pathlib import Path

from app.collect.config import load_settings
from app.serving import url
from app.web.access import allowed_hosts


def test_loopback_allows_loopback_names_only() -> None:
    names = allowed_hosts(load_settings({}))
    assert {"localhost", "127.0.0.1"} <= names and "*" not in names and "gpu-box.example" not in names


def test_bound_to_the_network_any_name_is_allowed_because_the_token_guards_every_route() -> None:
    """A container cannot know the names its published port is reached by; a page that rebinds a name to this
    machine still gets 401 without the token (tests/system/test_image.py, from another address)."""
    settings = load_settings({"FANWHY_HOST": "0.0.0.0", "FANWHY_TOKEN": "b2e9f4a17c3d8065e1f2a9b4c7d30e68"})
    assert allowed_hosts(settings) == {"*"}


def test_an_explicit_list_narrows_a_network_bind_to_its_names_and_loopbacks() -> None:
    settings = load_settings({"FANWHY_HOST": "0.0.0.0", "FANWHY_TOKEN": "b2e9f4a17c3d8065e1f2a9b4c7d30e68",
                              "FANWHY_ALLOWED_HOSTS": "gpu-box"})
    assert allowed_hosts(settings) == {"gpu-box", "localhost", "127.0.0.1", "::1"}


def test_on_loopback_the_list_adds_a_proxys_names() -> None:
    settings = load_settings({"FANWHY_ALLOWED_HOSTS": "gpu.example.com, 192.0.2.7"})
    assert allowed_hosts(settings) == {"gpu.example.com", "192.0.2.7", "localhost", "127.0.0.1", "::1"}


def test_in_a_container_the_url_is_the_published_port_on_the_host(tmp_path: Path) -> None:
    settings = load_settings({"FANWHY_HOST": "0.0.0.0", "FANWHY_TOKEN": "b2e9f4a17c3d8065e1f2a9b4c7d30e68"})
    assert url(settings, root=str(tmp_path)).startswith("http://") and "localhost" not in url(settings, str(tmp_path))
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ".containerenv").write_text("")
    assert url(settings, root=str(tmp_path)) == "http://localhost:8090/"
    assert url(load_settings({}), root=str(tmp_path)) == "http://127.0.0.1:8090/"  # loopback: as it is
