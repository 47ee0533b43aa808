"""The public face (STYLE: sorted __all__, exact names) and the layering of docs/design.md."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import multiplex

PACKAGE = Path(multiplex.__file__).parent

DOCUMENTED_NAMES = {
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
    "CallbackPrompter",
    "TerminalPrompter",
    "ContextKind",
    "DecidedBy",
    "Profile",
    "ProfileConfigError",
    "RoutingError",
    "register_surface",
}


def test_exports_are_exactly_the_public_names() -> None:
    assert multiplex.__all__ == sorted(multiplex.__all__)
    assert set(multiplex.__all__) == DOCUMENTED_NAMES | EXTRA_PUBLIC
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


# Layers, bottom to top, exactly as docs/design.md states them. A module may
# import its own layer or below.
LAYERS: list[tuple[str, ...]] = [
    ("multiplex._errors", "multiplex._literals", "multiplex.kernel"),
    ("multiplex.shell", "multiplex.redaction", "multiplex._metrics"),
    ("multiplex.profiles",),
    ("multiplex.scopes",),
    ("multiplex.approval",),
    ("multiplex.execution",),
    ("multiplex.watching",),
    ("multiplex.supervision",),
    ("multiplex.cluster",),
    ("multiplex.gateway", "multiplex.cli", "multiplex.audit", "multiplex.__main__", "multiplex"),
]

# Command analysis is pure: it reads no file, starts no process, touches no network.
PURE_PACKAGES = ("shell", "redaction")
IO_MODULES = {"os", "io", "subprocess", "socket", "pathlib", "shutil", "tempfile"}

# At most four plain modules directly under multiplex/ besides __init__ and __main__.
MAX_TOP_LEVEL_MODULES = 4


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


def test_pure_packages_do_no_io() -> None:
    for package in PURE_PACKAGES:
        for path in (PACKAGE / package).rglob("*.py"):
            tree = ast.parse(path.read_text())
            for node in ast.walk(tree):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [a.name.split(".")[0] for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module.split(".")[0]]
                assert not IO_MODULES.intersection(names), f"{path} imports {names}"
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                    assert node.func.id != "open", f"{path} opens a file"


def test_top_level_stays_small() -> None:
    plain = sorted(
        p.name for p in PACKAGE.glob("*.py") if p.name not in {"__init__.py", "__main__.py"}
    )
    assert len(plain) <= MAX_TOP_LEVEL_MODULES, plain


def test_no_module_names_differ_only_by_underscore() -> None:
    for folder in [PACKAGE, *[d for d in PACKAGE.rglob("*") if d.is_dir()]]:
        stems = [p.stem for p in folder.glob("*.py") if not p.stem.startswith("__")]
        bare = [s.lstrip("_") for s in stems]
        assert len(bare) == len(set(bare)), f"{folder}: {sorted(stems)}"


def test_layers_match_the_design_doc() -> None:
    design = (PACKAGE.parent / "docs" / "design.md").read_text()
    for names in LAYERS:
        for name in names:
            if name != "multiplex":
                assert f"`{name}`" in design, f"docs/design.md does not state the layer of {name}"


def test_the_cli_loads_no_kernel_library() -> None:
    # docs/operations.md#starting-fast: every CLI command and hook is a new process;
    # jupyter-client, zmq and ipykernel load with a profile's first kernel only.
    code = (
        "import sys, multiplex.cli, multiplex.cli._app;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in"
        " ('jupyter_client', 'zmq', 'ipykernel')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", done.stdout
