"""The portal's apps import only apps below them (``portal/README.md``), so none doubles back on
another; the plain packages import nothing of the portal (the Grafana generator, the sensors
and the simulator run without Django). Read from the code as written, function-local imports
included; tests are left out (a test may drive the whole portal)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Low to high: an app imports only apps of a lower line. One line's apps know nothing of each
# other. An app that needs a higher one's facts receives them as arguments, through a registry
# it owns (portal/jobs/registry.py, portal/health/registry.py) or a signal it sends.
LAYERS = (
    ("accounts", "jobs"),
    ("inventory",),
    ("health",),
    ("usage",),  # the owners' usage: health's thresholds; the alert rules read it
    ("alerts",),  # health's colours; the mail relay's tile registered with health
    ("console",),  # its maintenance window silences alerts
    ("surveys",),  # its starts audited by the console; its verdict names health's findings
    ("analytics", "wizard", "backup"),  # backup and restore: the whole appliance's state
)
# Packages that run without Django and import nothing of the portal.
PLAIN_PACKAGES = ("dashboards", "provisioning", "sensors", "simulator", "metrics")
LEFT_OUT = {"tests", "__pycache__"}


def apps(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "portal").iterdir() if (p / "apps.py").is_file())


def sources(top: Path) -> Iterator[Path]:
    for path in sorted(top.rglob("*.py")):
        if not LEFT_OUT & set(path.relative_to(top).parts):
            yield path


def imports(path: Path, root: Path) -> Iterator[tuple[str, list[str]]]:
    """Every import statement of the file, anywhere in it, as ('file:line: statement', the
    modules it names): a relative import resolved against the file's package, ``from a import
    b`` as ``a`` and ``a.b`` (b may be a module)."""
    package = path.relative_to(root).with_suffix("").parts[:-1]
    text = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            modules = [module] + [f"{module}.{alias.name}" for alias in node.names]
        else:
            continue
        statement = " ".join(ast.get_source_segment(text, node).split())
        yield f"{path.relative_to(root)}:{node.lineno}: {statement}", modules


def app_of(module: str, known: set[str]) -> str | None:
    parts = module.split(".")
    if len(parts) > 1 and parts[0] == "portal" and parts[1] in known:
        return parts[1]
    return None


def app_edges(root: Path) -> dict[tuple[str, str], list[str]]:
    """(importer, imported) -> where: every import of one portal app by another."""
    known = set(apps(root))
    edges: dict[tuple[str, str], list[str]] = {}
    for app in sorted(known):
        for path in sources(root / "portal" / app):
            for where, modules in imports(path, root):
                for other in dict.fromkeys(app_of(module, known) for module in modules):
                    if other and other != app:
                        edges.setdefault((app, other), []).append(where)
    return edges


def upward_imports(root: Path) -> list[str]:
    """Every import of an app of the same or a higher layer, as 'file:line: statement
    (app -> app ...)'."""
    layer = {app: number for number, names in enumerate(LAYERS) for app in names}
    found = []
    for (app, other), places in sorted(app_edges(root).items()):
        if app not in layer or other not in layer:
            continue  # test_every_app_has_its_place_in_the_layers names it
        if layer[other] >= layer[app]:
            how = "of the same layer" if layer[other] == layer[app] else "above it"
            found += [f"{where} ({app} -> {other}: {how})" for where in places]
    return found


def cycles(root: Path) -> list[list[str]]:
    """The app cycles, each as the apps around it (first app again at the end)."""
    graph: dict[str, set[str]] = {}
    for app, other in app_edges(root):
        graph.setdefault(app, set()).add(other)
    found: list[list[str]] = []
    done: set[str] = set()

    def visit(app: str, path: list[str]) -> None:
        for other in sorted(graph.get(app, ())):
            if other in path:
                cycle = path[path.index(other) :] + [other]
                if sorted(cycle[:-1]) not in [sorted(c[:-1]) for c in found]:
                    found.append(cycle)
            elif other not in done:
                visit(other, [*path, other])
        done.add(app)

    for app in sorted(graph):
        visit(app, [app])
    return found


def portal_imports(root: Path) -> list[str]:
    """Every import of the portal in a plain package, as 'file:line: statement'."""
    found = []
    for package in PLAIN_PACKAGES:
        if not (root / package).is_dir():
            continue
        for path in sources(root / package):
            for where, modules in imports(path, root):
                if any(m == "portal" or m.startswith("portal.") for m in modules):
                    found.append(where)
    return found


def test_every_app_has_its_place_in_the_layers():
    declared = sorted(app for names in LAYERS for app in names)
    assert declared == apps(ROOT), "add the new app to LAYERS (and to portal/README.md)"


def test_no_app_imports_an_app_of_its_layer_or_above():
    found = upward_imports(ROOT)
    assert not found, "imports against the layers:\n" + "\n".join(found)


def test_no_cycle_between_apps():
    found = cycles(ROOT)
    assert not found, "cycles between apps:\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_plain_packages_import_nothing_of_the_portal():
    found = portal_imports(ROOT)
    assert not found, "plain packages importing the portal:\n" + "\n".join(found)


def test_the_reading_finds_function_local_and_relative_imports(tmp_path):
    """The reading itself: an import inside a function, and a relative one, count."""
    for app in ("health", "alerts"):
        (tmp_path / "portal" / app / "services").mkdir(parents=True)
        (tmp_path / "portal" / app / "apps.py").write_text("")
    (tmp_path / "portal" / "health" / "services" / "tiles.py").write_text(
        "def tiles():\n    from portal.alerts.models import Delivery\n"
    )
    (tmp_path / "portal" / "alerts" / "services" / "rounds.py").write_text(
        "from ...health import models\n"
    )
    assert app_edges(tmp_path) == {
        ("health", "alerts"): [
            "portal/health/services/tiles.py:2: from portal.alerts.models import Delivery"
        ],
        ("alerts", "health"): ["portal/alerts/services/rounds.py:1: from ...health import models"],
    }
    assert cycles(tmp_path) == [["alerts", "health", "alerts"]]


# What the portal's root holds: the Django project's own files. Everything else joins an app
# or one of the shared packages below the apps.
PROJECT_FILES = {"__init__.py", "settings", "urls.py", "wsgi.py", "asgi.py", "api_router.py"}
PROJECT_FILES |= {"conftest.py"}  # the suite's fixtures for every app
SHARED_PACKAGES = ("web", "single_row", "influxdb")


def test_the_portal_root_keeps_only_the_project_and_the_shared_packages():
    loose = sorted(
        path.name
        for path in (ROOT / "portal").iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").is_file())
        and path.name not in PROJECT_FILES
        and path.name not in SHARED_PACKAGES
        and not (path / "apps.py").is_file()
        and path.name != "tests"
    )
    assert not loose, f"portal/ holds {loose}: move each into an app or a shared package"


def test_the_shared_packages_import_no_app_but_the_lowest():
    """portal/web, portal/single_row and portal/influxdb serve every app above the first layer:
    they may ask accounts who the user is and what role they hold, and import nothing of any
    other app; the first layer's apps import nothing of them."""
    known = set(apps(ROOT))
    lowest = set(LAYERS[0])
    found = [
        where
        for package in SHARED_PACKAGES
        for path in sources(ROOT / "portal" / package)
        for where, modules in imports(path, ROOT)
        if {app_of(module, known) for module in modules} - {None, "accounts"}
    ]
    found += [
        where
        for app in lowest
        for path in sources(ROOT / "portal" / app)
        for where, modules in imports(path, ROOT)
        if any(m.startswith(tuple(f"portal.{p}" for p in SHARED_PACKAGES)) for m in modules)
    ]
    assert not found, "shared packages against the layers:\n" + "\n".join(found)
