"""``fanwhy explain --json`` of one pasted text, as the tests that judge its answer read it."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from app.cli.replay import run


def explained(tmp_path: Path, text: str) -> dict[str, Any]:
    """The JSON answer for ``text`` saved as ``paste.txt`` (a refusal fails the calling test with its line)."""
    path = tmp_path / "paste.txt"
    path.write_text(text)
    out, err = io.StringIO(), io.StringIO()
    assert run([path], as_json=True, out=out, err=err) == 0, err.getvalue()
    answer: dict[str, Any] = json.loads(out.getvalue())
    return answer
