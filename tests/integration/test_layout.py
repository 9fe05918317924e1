"""The layout of app/ as docs/ARCHITECTURE.md draws it: every module on the map, every import allowed by its layer,
no hub module, and a light package."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import TIER_FOLDERS as TIERS

ROOT = Path(__file__).resolve().parent.parent.parent
MAP = ROOT / "docs" / "ARCHITECTURE.md"


# The layer of each folder of app/ (a module directly in app/ is assembly): the path says it, the page agrees.
FOLDERS = {"core": "foundation", "vendors": "vendors", "attribution": "attribution", "fans": "fans",
           "collect": "engine", "verdict": "engine", "store": "engine", "web": "web", "cli": "assembly"}


def layer_of_path(path: str) -> str:
    parts = path.split("/")
    assert parts[0] == "app", path
    if len(parts) == 2:
        return "assembly"
    assert parts[1] in FOLDERS, f"{path}: app/{parts[1]}/ is not a folder of the layout (add it to FOLDERS, the page)"
    return FOLDERS[parts[1]]


def layers() -> tuple[dict[str, set[str]], dict[str, str]]:
    """(layer -> the layers it may import, module path -> its layer): the rules read from the page, each module's
    layer from its path."""
    text = MAP.read_text()
    allowed: dict[str, set[str]] = {}
    for name, may in re.findall(r"^\| (\w+) \| ([\w, ]+) \| ", text, re.MULTILINE):
        if name not in ("layer", "module", "folder"):
            allowed[name] = set() if may.strip() == "nothing" else {m.strip() for m in may.split(",")}
    allowed["assembly"] = set(allowed) if "every layer" in text else allowed.get("assembly", set())
    listed = re.findall(r"^\| `(app/[\w/]+\.py)` \| (\w+) \|", text, re.MULTILINE)
    return allowed, {path: layer_of_path(path) for path, _ in listed}


def test_the_page_gives_each_module_the_layer_of_its_folder() -> None:
    text = MAP.read_text()
    listed = re.findall(r"^\| `(app/[\w/]+\.py)` \| (\w+) \|", text, re.MULTILINE)
    wrong = [f"{path}: the page says {layer}, the folder {layer_of_path(path)}" for path, layer in listed
             if layer != layer_of_path(path)]
    assert wrong == []
    folders = dict(re.findall(r"^\| `app/(\w+)/` \| (\w+) \|", text, re.MULTILINE))
    assert folders == FOLDERS


def test_every_folder_says_what_it_holds_and_may_import() -> None:
    for folder in FOLDERS:
        doc = ast.get_docstring(ast.parse((ROOT / "app" / folder / "__init__.py").read_text())) or ""
        assert len(doc) > 80 and ("import" in doc or folder in ("vendors", "attribution")), folder


def module_name(path: Path) -> str:
    name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return name.removesuffix(".__init__")


def imports(path: Path) -> set[str]:
    """The app modules ``path`` imports, at the top or inside a function; relative imports resolved (inside app/
    every import is relative, so that the package works under the name the wheel gives it, ``fanwhy``)."""
    me = module_name(path).split(".")
    package = me if path.name == "__init__.py" else me[:-1]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            if module.split(".")[0] != "app":
                continue
            if module == "app" or module.removeprefix("app.") in FOLDERS:  # ``from ..core import model``
                found |= {f"{module}.{alias.name}" for alias in node.names}
            else:
                found.add(module)
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.split(".")[0] == "app"}
    return found


def _absolute_app_import(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return not node.level and (node.module or "").split(".")[0] == "app"
    return isinstance(node, ast.Import) and any(a.name.split(".")[0] == "app" for a in node.names)


def test_inside_app_every_import_is_relative() -> None:
    """``from app.x import y`` inside app/ would break the installed ``fanwhy`` package."""
    absolute = [f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', '?')}"
                for path in sorted((ROOT / "app").rglob("*.py"))
                for node in ast.walk(ast.parse(path.read_text())) if _absolute_app_import(node)]
    assert absolute == []


def test_relative_imports_are_resolved() -> None:
    """The resolver turns a web module's relative imports into the modules the map knows."""
    fake = ROOT / "app" / "web" / "api.py"
    assert "app.collect.collector" in imports(fake)
    assert {"app.core.model", "app.core.version"} <= imports(fake)


def test_every_module_is_on_the_map() -> None:
    _, modules = layers()
    present = {str(p.relative_to(ROOT)) for p in (ROOT / "app").rglob("*.py")}
    assert present - set(modules) == set(), "modules missing from docs/ARCHITECTURE.md"
    assert set(modules) - present == set(), "docs/ARCHITECTURE.md names modules that do not exist"


def test_every_import_is_allowed_by_its_layer() -> None:
    allowed, modules = layers()
    layer_of = {module_name(ROOT / path): layer for path, layer in modules.items()}
    lazy = {"app.create_app": "app.application", "app.build_collector": "app.application"}
    wrong = []
    for path, layer in modules.items():
        me = module_name(ROOT / path)
        for target in imports(ROOT / path):
            target = lazy.get(target, target)
            theirs = layer_of.get(target)
            assert theirs is not None, f"{path} imports {target}, which is not on the map"
            if theirs != layer and theirs not in allowed[layer] and me != target:
                wrong.append(f"{path} ({layer}) imports {target} ({theirs})")
    assert wrong == []


def test_the_map_catches_a_view_that_reads_a_vendor() -> None:
    """The rule itself can fail: a web module importing the NVML backend is a violation."""
    allowed, _ = layers()
    assert "vendors" not in allowed["web"] and "attribution" not in allowed["web"]
    assert allowed["foundation"] == set()


def test_no_module_over_400_lines_without_a_reason_at_its_top() -> None:
    for path in (ROOT / "app").rglob("*.py"):
        text = path.read_text()
        if text.count("\n") > 400:
            head = text[:1500]
            assert "Over 400 lines on purpose" in head, f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines"


def test_importing_the_client_loads_no_flask() -> None:
    """`app.client` is documented as standard library only: the package must not pull Flask in."""
    code = ("import sys, app.client; heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('flask', 'werkzeug', 'flask_socketio', 'psutil', 'gevent')); print(heavy); sys.exit(bool(heavy))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_function_in_app_is_above_complexity_20_without_a_reason() -> None:
    """Cyclomatic complexity (radon) at most 20 per function, or a ``# complexity:`` comment in it saying why."""
    from radon.complexity import cc_visit

    too_complex = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        source = path.read_text()
        lines = source.splitlines()
        for block in cc_visit(source):
            body = "\n".join(lines[block.lineno - 1:block.endline])
            if block.complexity > 20 and "# complexity:" not in body:
                too_complex.append(f"{path.relative_to(ROOT)}:{block.lineno} {block.name} ({block.complexity})")
    assert not too_complex, "functions above complexity 20 with no reason written:\n" + "\n".join(too_complex)


ANY_IGNORE = re.compile("#" + r"\s*type:\s*ignore")  # split so that these lines do not match themselves
GOOD_IGNORE = re.compile("#" + r" type: ignore\[[a-z, -]+\]  # \S")


def test_every_type_ignore_names_its_error_code_and_a_reason() -> None:
    bare = []
    for folder in ("app", "tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text().splitlines(), start=1):
                if ANY_IGNORE.search(line) and not GOOD_IGNORE.search(line):
                    bare.append(f"{path.relative_to(ROOT)}:{number}")
    assert not bare, "type: ignore without an error code and a reason:\n" + "\n".join(bare)


def test_the_docs_point_only_to_files_that_exist() -> None:
    """Every relative link and every `path/like/this.ext` the README and docs/ name is in the repository."""
    missing = []
    for page in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md",
                 *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text()
        links = re.findall(r"\]\((?!https?:|#|mailto:)([^)#\s]+)", text)
        paths = re.findall(r"`((?:app|docs|deploy|tests|benchmarks|static|templates)/[\w./-]+\.\w+)`", text)
        for target in {*links, *paths}:
            if "*" in target or "<" in target:
                continue
            if not ((page.parent / target).exists() or (ROOT / target).exists()):
                missing.append(f"{page.relative_to(ROOT)}: {target}")
    assert not missing, "\n".join(missing)


def test_no_raw_result_is_kept_in_the_tree() -> None:
    """Benchmarks write their raw output where the user says (``--out``; ``out/`` is ignored by git): under
    benchmarks/ only the code, under docs/ only pages and the screenshots with their words."""
    kept = [p for p in [*(ROOT / "benchmarks").rglob("*"), *(ROOT / "docs").rglob("*")]
            if p.is_file() and "__pycache__" not in p.parts
            and not (p.suffix == ".py" and ROOT / "benchmarks" in p.parents)
            and not (p.suffix == ".md" and p.parent == ROOT / "docs")
            and not (p.suffix in {".png", ".json"} and p.parent == ROOT / "docs" / "screenshots")]
    assert not kept, [str(p.relative_to(ROOT)) for p in kept]
    assert "/out/" in (ROOT / ".gitignore").read_text().split()


def test_the_readme_is_a_front_door_and_the_figures_one_table() -> None:
    """The README stays short; docs/PERFORMANCE.md is one table whose every row names its command, and neither it nor
    the CHANGELOG keeps a lab's notes (hosts by letter, raw result files)."""
    assert len((ROOT / "README.md").read_text().splitlines()) <= 120
    performance = (ROOT / "docs" / "PERFORMANCE.md").read_text()
    rows = [line for line in performance.splitlines() if line.startswith("| ") and not line.startswith("| measure")]
    assert len(rows) >= 10 and all("benchmarks." in row or " above" in row for row in rows), rows
    assert performance.count("\n## ") <= 2  # the table and how each figure is measured
    for page in ("docs/PERFORMANCE.md", "CHANGELOG.md", "docs/HARDWARE.md"):
        text = (ROOT / page).read_text()
        assert not re.search(r"\bhosts? [A-Z]{1,2}\b|results/", text), page


def test_the_demo_is_a_backend_like_the_others() -> None:
    """The assembly never asks which backend it was given: the demo's machine comes through
    ``Backend.surroundings`` and its own history through the vendors' ``OWN_HISTORY``."""
    source = (ROOT / "app" / "collect" / "assemble.py").read_text()
    assert '"simulated"' not in source and "simulated_machine" not in source


# Where the project's own words live: code (docstrings and comments too), tests, benchmarks, deploy files and pages.
OWN_WORDS = ("app/**/*.py", "tests/**/*.py", "benchmarks/**/*.py", "deploy/**/*", "docs/*.md", "*.md", "Makefile",
             "Dockerfile", ".ci/run", "pyproject.toml", "requirements*.txt")
PATH_NAMED = re.compile(r"(?<![\w/.-])((?:app|docs|tests|deploy|benchmarks|static|templates)/[\w/.-]*\w\."
                        r"(?:py|md|json|ya?ml|txt|html|js|css|png|toml|service|sh|db))\b")
# A reference outside the repository: the workplace's shared folder, a style guide or design card kept there, a
# tracker's issue number. (Split so that this line does not match itself.)
OUTSIDE = re.compile("|".join([r"\.\./" + "shared", "shared/" + "facts", "shared/" + "tools", "STYLE" + r"\.md",
                               r"\b[Ii]ssues? " + r"#\d+", r"\bUntil " + r"#\d+"]))


def _own_files() -> list[Path]:
    return sorted({p for pattern in OWN_WORDS for p in ROOT.glob(pattern) if p.is_file()})


def test_every_path_the_code_and_pages_name_exists() -> None:
    """Docstrings, comments, tests and deploy files included: a named `app/...py` or `docs/...md` is there."""
    missing = []
    for path in _own_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1):
            for target in PATH_NAMED.findall(line):
                if "*" not in target and not ((ROOT / target).exists() or (path.parent / target).exists()):
                    missing.append(f"{path.relative_to(ROOT)}:{number}: {target}")
    assert not missing, "\n".join(missing)


def test_nothing_points_outside_the_repository() -> None:
    """No file outside the repository and no tracker is cited: what the project needs to say, it says itself."""
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}" for path in _own_files()
             for number, line in enumerate(path.read_text(errors="replace").splitlines(), start=1)
             if OUTSIDE.search(line)]
    assert not found, "\n".join(found)


def test_every_test_file_is_in_the_folder_of_its_tier() -> None:
    """A test's tier is its folder: no test file directly in tests/."""
    assert sorted(p.name for p in (ROOT / "tests").glob("test_*.py")) == []
    assert {p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py"))} == set(TIERS)


def test_every_test_is_in_exactly_one_tier(request: pytest.FixtureRequest) -> None:
    """Every collection checks that each test carries exactly its folder's tier (tests/conftest.py refuses the run
    otherwise): so this run's tests do, and the check catches a test marked with a second tier or with none."""
    from tests.conftest import tier_errors

    assert tier_errors(request.session.items) == []

    class Marked:  # a collected test, as far as the check looks at one: where it is and its markers
        def __init__(self, folder: str, *tiers: str) -> None:
            self.path, self.tiers = next((ROOT / "tests" / folder).glob("test_*.py")), tiers
            self.nodeid = str(self.path.relative_to(ROOT))

        def get_closest_marker(self, name: str) -> object | None:
            return name if name in self.tiers else None

    assert tier_errors([Marked("unit", "unit"), Marked("gpu", "gpu")]) == []
    wrong = tier_errors([Marked("unit", "unit", "system"), Marked("gpu"), Marked("integration", "unit")])
    assert [line.split("/")[1] for line in wrong] == ["unit", "gpu", "integration"]


def test_any_stays_at_the_boundaries() -> None:
    """``Any`` only where untyped data enters (a vendor library without hints, a socket a server library hands over,
    Flask's config, a dataclass filled from a parsed setting), at most 39 lines. A new one is a view that should
    read the model, or JSON that should be ``Json`` (app/core/jsonvalue.py), a TypedDict, or ``object``."""
    lines = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "app").rglob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"\bAny\b", line)]
    assert len(lines) <= 39, "\n".join(lines)


def test_the_web_reaches_the_applications_services_through_one_typed_accessor() -> None:
    """``app.web.services.services()`` (checked by mypy) is the only reader of ``app.extensions``: a view that looks
    a service up by a string is unchecked."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "app").rglob("*.py"))
             if path != ROOT / "app" / "web" / "services.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if "extensions[" in line or
             "extensions.get(" in line]
    assert not found, found


def test_the_token_is_read_and_compared_only_by_the_access_policy() -> None:
    """Who may pass, with which credential, from which Host is app/web/access.py's alone: no other module reads
    the Authorization header or the sign-in cookie, or compares a token."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "app" / "web").rglob("*.py"))
             if path.name != "access.py"
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"HTTP_AUTHORIZATION|compare_digest|token_matches|parse_cookie", line)]
    assert not found, found


# The engine's three packages in a line: verdict builds on core and the fan wing, store on core alone; collect
# assembles them (docs/ARCHITECTURE.md, "The engine in a line").
ENGINE_ORDER = {"verdict": {"core", "fans"}, "store": {"core"},
                "collect": {"core", "vendors", "attribution", "fans", "verdict", "store"}}


def test_the_engine_packages_are_in_a_line() -> None:
    """verdict imports only core and the fan wing; store imports only core (it is handed which verdicts to keep and
    how a recording's receipt is measured); collect imports them both and nothing imports collect back from them."""
    wrong = []
    for folder, may in ENGINE_ORDER.items():
        for path in sorted((ROOT / "app" / folder).glob("*.py")):
            for target in imports(path):
                package = target.split(".")[1] if target.count(".") else ""
                if package not in (folder, *may):
                    wrong.append(f"{path.relative_to(ROOT)} imports {target}")
    assert wrong == []


def test_the_vendors_read_no_setting_by_name() -> None:
    """The backends are built with typed options (app/vendors/options.py), never a settings object read with
    ``getattr`` and a string."""
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "app" / "vendors").glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if re.search(r"getattr\(settings", line)]
    assert not found, found


def test_settings_are_text_and_numbers_and_the_rules_are_built_at_assembly() -> None:
    """Loading settings builds nothing of the engine's: app/collect/config.py, settings.py and declare.py import no
    verdict (the alert rules and notification targets are built from their text by app/collect/assemble.py)."""
    found = [f"{name} imports {target}" for name in ("config.py", "settings.py", "declare.py")
             for target in imports(ROOT / "app" / "collect" / name) if ".verdict" in target]
    assert found == []
