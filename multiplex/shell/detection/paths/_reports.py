"""Files and folders build, test, report and dump tools write where an option says
(docs/approvals.md#protected-files).

``coverage xml -o F``, ``mypy --junit-xml F``, ``ruff check -o F``, ``tsc --outDir D``,
``go test -coverprofile=F``, ``docker save -o F``, ``pg_dump -f F``, ``helm package -d
D``, and the folder a tree is checked out or extracted into (``hg clone URL D``,
``dpkg-deb -x X.deb D``): an allowlisted
tool pointed at ``AGENTS.md`` or ``.git/hooks`` writes it as ``cp`` would. Each program's options are read as its parser reads them: ``--opt F``,
``--opt=F``, a short option glued to its value (``-oF``), go's single-dash long options,
and pytest-cov's ``--cov-report=TYPE:PATH``. A pure leaf: stdlib and ``shell.parsing._argv``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from multiplex.shell.detection.paths._trees import TREE_WRITERS, written_into
from multiplex.shell.parsing._argv import positional

__all__ = ["REPORTERS", "reported"]

# program -> (its verb, or "" for any; the options whose value is a file or folder written)
_REPORTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "coverage": (("", ("-o", "-d", "--directory")),),
    "mypy": (("", ("--junit-xml", "--html-report", "--txt-report", "--xml-report",
                   "--linecount-report", "--linecoverage-report", "--lineprecision-report",
                   "--any-exprs-report", "--cobertura-xml-report", "--xslt-html-report",
                   "--xslt-txt-report")),),
    "ruff": (("", ("-o", "--output-file")),),
    "eslint": (("", ("-o", "--output-file")),),
    "tsc": (("", ("--outFile", "--outDir", "--declarationDir", "--tsBuildInfoFile")),),
    "jest": (("", ("--outputFile",)),),
    "vitest": (("", ("--outputFile",)),),
    "go": (("test", ("-o", "-coverprofile", "-cpuprofile", "-memprofile", "-blockprofile",
                     "-mutexprofile", "-trace", "-outputdir")),),
    "docker": (("save", ("-o", "--output")), ("export", ("-o", "--output"))),
    "podman": (("save", ("-o", "--output")), ("export", ("-o", "--output"))),
    "pg_dump": (("", ("-f", "--file")),),
    "pg_dumpall": (("", ("-f", "--file")),),
    "mysqldump": (("", ("-r", "--result-file")),),
    "redis-cli": (("", ("--rdb",)),),
    "mongodump": (("", ("--archive", "-o", "--out")),),
    "helm": (("package", ("-d", "--destination")), ("template", ("--output-dir",))),
    "terraform": (("plan", ("-out",)),),
    "tofu": (("plan", ("-out",)),),
    "mkdocs": (("build", ("-d", "--site-dir")),),
    "hugo": (("", ("-d", "--destination")),),
    "yt-dlp": (("", ("-o", "--output")),),
    "npm": (("pack", ("--pack-destination",)),),
    "journalctl": (("", ("--cursor-file",)),),
    "nyc": (("", ("--report-dir", "--temp-dir")),),
    "c8": (("", ("--report-dir", "-o", "--temp-directory")),),
    "vite": (("build", ("--outDir",)),),
    "webpack": (("", ("-o", "--output-path")),),
    "babel": (("", ("-d", "--out-dir", "-o", "--out-file")),),
    "rollup": (("", ("-o", "--file", "-d", "--dir")),),
    "cargo": (("", ("--target-dir",)),),
    "pylint": (("", ("--output",)),),
    "bandit": (("", ("-o", "--output")),),
    "flake8": (("", ("--output-file",)),),
    "uudecode": (("", ("-o", "--output-file")),),
}  # fmt: skip
_REPORTS["jest"] = (("", ("--outputFile", "--coverageDirectory")),)
_REPORTS["vitest"] = (("", ("--outputFile", "--coverage.reportsDirectory")),)
# go's flags take one dash or two
_REPORTS["go"] = (("test", tuple(f for o in _REPORTS["go"][0][1] for f in (o, "-" + o))),)
REPORTERS = frozenset({*_REPORTS, *TREE_WRITERS, "pytest", "py.test", "sphinx-build"})
_SPHINX_VALUES = frozenset({"-b", "-M", "-d", "-c", "-D", "-t", "-j", "-w", "-A", "--jobs"})


def _values(args: Sequence[str], options: tuple[str, ...]) -> Iterator[str]:
    longer = tuple(o for o in options if len(o) > 2)
    for i, arg in enumerate(args):
        for option in options:
            if arg == option and i + 1 < len(args):
                yield args[i + 1]
            elif arg.startswith(option + "="):
                yield arg[len(option) + 1 :]
            elif len(option) == 2 and len(arg) > 2 and arg.startswith(option):
                yield from () if arg.startswith(longer) else (arg[2:],)  # -oF, not -outputdir=D


def reported(prog: str, args: Sequence[str]) -> Iterator[str]:
    """What ``prog ARGS`` (one of :data:`REPORTERS`) writes by its output options."""
    if prog in ("pytest", "py.test"):  # --cov-report=xml:F, html:DIR (pytest-cov)
        for value in _values(args, ("--cov-report",)):
            kind, _, path = value.partition(":")
            if path and kind in ("xml", "html", "json", "lcov", "annotate", "markdown"):
                yield path
        return
    if prog in TREE_WRITERS:  # hg clone URL DIR, dpkg-deb -x X DIR: the tree's folder
        yield from written_into(prog, args)
        return
    if prog == "sphinx-build":  # sphinx-build [options] SOURCE OUTPUT, -w F, -d DIR
        operands = positional(args, _SPHINX_VALUES)
        yield from (*operands[1:2], *_values(args, ("-w", "-d")))
        return
    words = [a for a in args if not a.startswith("-")]
    for verb, options in _REPORTS[prog]:
        if not verb or verb in words[:2]:
            yield from _values(args, options)
