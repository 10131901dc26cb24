"""Every repository path and module that README.md and docs/*.md name exists (issue 34, item 5).

Fast and torch-free: the docs are read as text and the repository's modules are parsed with
:mod:`ast`, never imported. What counts as a reference, everywhere in a doc (prose, code spans,
tables and code blocks alike):

1. **A path** -- a run of path characters with a ``/`` in it (``export/program/contract.py``,
   ``tests/e2e/deploy/``, ``.ci/run``) -- counts when its first component is one of the
   repository's top-level folders (:data:`ROOTS`), and is resolved from the repository root: a
   file or a folder must be there. A trailing ``/``, ``:LINE`` or ``:name`` is dropped, braces
   expand (``tests/solver/{kernel,state}``), a ``*`` must match something. A path that starts
   anywhere else is not the repository's and is left alone: torch's own files
   (``torch/_ops.py``, ``_dynamo/guards.py:3259``, ``fx/experimental/sym_node.py``,
   ``site-packages/torch``), outputs and user files (``model.pt2``, ``out/model.pt2``,
   ``/tmp/...``), the environment (``.venv/bin/python``, ``../shared/...``). The one exception:
   torch's ``torch/export/`` files, which the torch notes name relative to ``torch/``
   (``export/_trace.py:340``): :data:`TORCH_EXPORT_FILES` lists them, and a test checks that each
   is torch's (in the installed torch, located without importing it).
2. **A package-relative path** -- first component a sub-package of ``shapes/``, ``solver/`` or
   ``export/`` (``diagnose/kept.py``, ``_torch_compat/version.py``, ``program/words``) -- is
   resolved inside that package (a ``.py`` may be left off).
3. **A link** ``[text](target)`` that is not a URL or an anchor is resolved from the doc's folder.
4. **A dotted name** whose first part is ``shapes``, ``solver``, ``export`` or ``benchmarks``,
   not preceded by a word character or a ``.`` (``torch.export.save`` is torch's), and not a file
   name (``export.py``: rule 5): its longest prefix that is a module (a ``.py`` file or a package
   folder) must exist, and each remaining part must be defined in what precedes it: in a module,
   a top-level ``def``/``class``/assignment/import or an ``__all__`` entry; in a class, a name its
   body defines (``shapes.contract.Contract.check``, ``shapes.budget.Budget.max_terms``). A call's
   parentheses and an entry point's ``:name`` (``export.cli.main:main``) are read the same way.
5. **A bare file name** ``name.py`` in a code span (``zero_one.py``, ``test_op_sites.py``) must be
   a file of that name somewhere in the repository, unless the docs use it for a torch file
   (:data:`TORCH_FILES`, checked like :data:`TORCH_EXPORT_FILES`) or for a user's own file
   (:data:`USER_FILES`); with a ``:LINE`` it is a source location in a message (``model.py:26``)
   and left alone.
"""

from __future__ import annotations

import ast
import functools
import importlib.metadata
import importlib.util
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))

ROOTS = frozenset({"shapes", "solver", "export", "tests", "benchmarks", "docs", "examples", "requirements", ".ci"})
"""The repository's top-level folders: a path starting with one of them is the repository's."""

PACKAGES = ("shapes", "solver", "export")
DOTTED_ROOTS = (*PACKAGES, "benchmarks")

TORCH_EXPORT_FILES = frozenset({"export/_trace.py", "export/exported_program.py", "export/_unlift.py",
                                "export/dynamic_shapes.py"})
"""torch's ``torch/export/`` files, named relative to ``torch/`` in docs/torch_internals.md."""

TORCH_FILES: dict[str, tuple[str, tuple[int, int]]] = {
    "_pytree.py": ("utils/_pytree.py", (2, 13)),
    "_spec_binding.py": ("fx/experimental/_spec_binding.py", (2, 14)),
    "_unlift.py": ("export/_unlift.py", (2, 13)),
    "cpp_wrapper_cpu.py": ("_inductor/codegen/cpp_wrapper_cpu.py", (2, 13)),
    "dynamic_spec.py": ("fx/experimental/dynamic_spec.py", (2, 13)),
    "non_strict_utils.py": ("_export/non_strict_utils.py", (2, 13)),
    "recording.py": ("fx/experimental/recording.py", (2, 13)),
    "sym_node.py": ("fx/experimental/sym_node.py", (2, 13)),
    "value_ranges.py": ("utils/_sympy/value_ranges.py", (2, 13)),
}
"""Bare names the docs use for torch's files: where each is under ``torch/``, since which release."""

USER_FILES = frozenset({"export.py", "shapes.py", "solver.py", "MODEL.py"})
"""Bare names the docs use for a user's files (docs/cli.md: a model folder's own ``export.py``;
the CLI's ``MODEL.py`` argument)."""

PATH_TOKEN = re.compile(r"(?<![\w./\\-])(\.{0,2}[\w.{}*,-]*(?:/[\w.{}*,-]*)+)")
DOTTED_TOKEN = re.compile(r"(?<![\w.])((?:%s)(?:\.\w+)+)(?::(\w+))?" % "|".join(DOTTED_ROOTS))
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
BARE_FILE = re.compile(r"^\w+\.py$")
FILE_SUFFIXES = frozenset({"py", "md", "json", "txt", "pt2", "onnx", "pte", "toml", "cfg", "so", "log"})


@dataclass(frozen=True, slots=True)
class Ref:
    """One reference: the doc and line it is on, its text, and what kind of reference it is."""

    doc: str
    line: int
    text: str
    kind: str  # "path", "link", "dotted" or "file"

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}: {self.kind} {self.text!r}"


def _expand(path: str) -> list[str]:
    """``a/{b,c}/d`` -> ``a/b/d``, ``a/c/d`` (one level of braces, as the docs write them)."""
    match = re.search(r"\{([^{}]*)\}", path)
    if match is None:
        return [path]
    head, tail = path[:match.start()], path[match.end():]
    return list(itertools.chain.from_iterable(_expand(head + part + tail) for part in match.group(1).split(",")))


def _clean(token: str) -> str:
    """A path token without what follows a path in prose: ``:LINE``, ``:name``, trailing punctuation."""
    token = token.split(":")[0]
    return token.rstrip(".,;")


def _exists(path: str, base: Path = ROOT) -> bool:
    paths = _expand(path)
    return bool(paths) and all(any(base.glob(p)) if "*" in p else (base / p).exists() for p in paths)


@functools.cache
def _subpackages() -> dict[str, tuple[Path, ...]]:
    """Sub-package name -> its folders (``diagnose`` -> ``export/diagnose``)."""
    found: dict[str, list[Path]] = {}
    for pkg in PACKAGES:
        for init in sorted((ROOT / pkg).glob("*/__init__.py")):
            found.setdefault(init.parent.name, []).append(init.parent)
    return {name: tuple(dirs) for name, dirs in found.items()}


@functools.cache
def _repo_file_names() -> frozenset[str]:
    names = {p.name for root in ROOTS for p in (ROOT / root).rglob("*.py")}
    return frozenset(names)


def references(doc: Path) -> list[Ref]:
    """Every reference ``doc`` makes, by the module docstring's rules (1 to 5)."""
    rel, refs = doc.relative_to(ROOT).as_posix(), []
    for number, line in enumerate(doc.read_text().splitlines(), 1):
        links = {m.group(1) for m in LINK.finditer(line)}
        for target in links:
            if not re.match(r"^(\w+:|#)", target):
                refs.append(Ref(rel, number, target.split("#")[0], "link"))
        for match in PATH_TOKEN.finditer(line):
            token = _clean(match.group(1))
            if token in links or "/" not in token:
                continue
            first = token.split("/")[0]
            if first in ROOTS or first in _subpackages():
                refs.append(Ref(rel, number, token, "path"))
        for match in DOTTED_TOKEN.finditer(line):
            dotted, attr = match.group(1), match.group(2)
            if dotted.rsplit(".", 1)[1] in FILE_SUFFIXES:
                continue
            refs.append(Ref(rel, number, dotted + (f".{attr}" if attr else ""), "dotted"))
        for match in CODE_SPAN.finditer(line):
            if BARE_FILE.match(match.group(1)):
                refs.append(Ref(rel, number, match.group(1), "file"))
    return refs


# -- resolving ----------------------------------------------------------------------------------


def _module_file(parts: tuple[str, ...]) -> Path | None:
    """The source of module ``a.b.c`` (``a/b/c.py`` or ``a/b/c/__init__.py``), if it exists."""
    base = ROOT.joinpath(*parts)
    if base.with_suffix(".py").is_file():
        return base.with_suffix(".py")
    if (base / "__init__.py").is_file():
        return base / "__init__.py"
    return None


def _defined(body: list[ast.stmt]) -> set[str]:
    """The names a module's or a class's body defines: defs, classes, assignments (also in an
    ``if``/``try`` at the top), imports, and the strings of an ``__all__``."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets) and node.value is not None:
                names.update(c.value for c in ast.walk(node.value)
                             if isinstance(c, ast.Constant) and isinstance(c.value, str))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.If, ast.Try)):
            names |= _defined(node.body + getattr(node, "orelse", []) + getattr(node, "finalbody", []))
    return names


@functools.cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def _class_body(body: list[ast.stmt], name: str) -> list[ast.stmt] | None:
    for node in body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node.body
    return None


def dotted_exists(dotted: str) -> bool:
    """Whether ``dotted`` names a module, or something defined in one (rule 4)."""
    parts = tuple(dotted.split("."))
    for cut in range(len(parts), 0, -1):
        source = _module_file(parts[:cut])
        if source is None:
            continue
        body: list[ast.stmt] | None = _tree(source).body
        for i, name in enumerate(parts[cut:]):
            if body is None or name not in _defined(body):
                return False
            body = _class_body(body, name)
            if body is None and i < len(parts[cut:]) - 1 and _module_file(parts[:cut + i + 1]) is not None:
                body = _tree(_module_file(parts[:cut + i + 1])).body  # type: ignore[arg-type]
        return True
    return False


def resolves(ref: Ref) -> bool:
    if ref.kind == "link":
        return _exists(ref.text, (ROOT / ref.doc).parent)
    if ref.kind == "dotted":
        return dotted_exists(ref.text)
    if ref.kind == "file":
        return ref.text in _repo_file_names() or ref.text in TORCH_FILES or ref.text in USER_FILES
    path = ref.text.rstrip("/")
    first, _, rest = path.partition("/")
    if first in ROOTS:
        return _exists(path) or path in TORCH_EXPORT_FILES
    return any(_exists(rest, d) or _exists(rest + ".py", d) for d in _subpackages()[first])


ALL_REFS = [ref for doc in DOCS for ref in references(doc)]


# -- the tests ------------------------------------------------------------------------------------


def test_every_path_and_module_the_docs_name_exists() -> None:
    missing = [str(ref) for ref in ALL_REFS if not resolves(ref)]
    assert not missing, "stale references in the docs:\n" + "\n".join(missing)


def test_the_scan_finds_every_kind_of_reference() -> None:
    """The rules find what they are meant to (so the test above cannot pass by finding nothing)."""
    kinds = {(ref.kind, ref.text) for ref in ALL_REFS}
    assert {("link", "docs/deploying.md"), ("path", "benchmarks/bench_deploy.py"), ("path", "export/deploy/"),
            ("path", "tests/e2e/deploy/test_aoti.py"), ("dotted", "shapes.contract_files"),
            ("dotted", "export.cli.main.main"), ("file", "zero_one.py")} <= kinds, sorted(kinds)
    assert len(ALL_REFS) > 300, len(ALL_REFS)


@pytest.mark.parametrize("text,found", [
    ("see `export/program/contract.py` and tests/e2e/deploy/", ["export/program/contract.py", "tests/e2e/deploy/"]),
    ("`torch/export/_unlift.py`, `site-packages/torch`, /tmp/x/model.pt2, out/model.pt2", []),
    ("`_dynamo/guards.py:3259` and `.venv/bin/python` and ../shared/DESIGN.md", []),
    ("`tests/solver/{kernel,state}` and `export/_trace.py:340`.", ["tests/solver/{kernel,state}", "export/_trace.py"]),
    ("(`diagnose/kept.py` decides)", ["diagnose/kept.py"]),
])
def test_path_rule(text: str, found: list[str], tmp_path: Path) -> None:
    doc = ROOT / "docs" / "_probe.md"
    try:
        doc.write_text(text + "\n")
        assert [r.text for r in references(doc) if r.kind == "path"] == found
    finally:
        doc.unlink()


@pytest.mark.parametrize("dotted,ok", [
    ("shapes.contract_files", True),  # a module
    ("export.deploy", True),  # a package
    ("shapes.contract.Contract", True),  # a class in a module
    ("shapes.budget.Budget.max_terms", True),  # a field of a class
    ("solver.service.__all__", True),
    ("export.RefusedInputError", True),  # re-exported by an import in __init__
    ("shapes.no_such_module", False),
    ("shapes.contract.Contract.no_such_method", False),
    ("export.guards.SolverBridge", False),
])
def test_dotted_rule(dotted: str, ok: bool) -> None:
    assert dotted_exists(dotted) is ok


def test_roots_are_the_repository_s_top_level_folders() -> None:
    """ROOTS stays the list of top-level folders (a new one must be added, a gone one removed)."""
    folders = {p.name for p in ROOT.iterdir() if p.is_dir() and (p.name in ROOTS or not (
        p.name.startswith(".") or p.name.endswith(".egg-info") or p.name in {"build", "__pycache__"}))}
    assert folders == ROOTS


def _torch_dir() -> tuple[Path, tuple[int, int]]:
    spec = importlib.util.find_spec("torch")  # locates torch without importing it
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("torch is not installed")
    major, minor = importlib.metadata.version("torch").split(".")[:2]
    return Path(list(spec.submodule_search_locations)[0]), (int(major), int(minor))


def test_the_torch_exceptions_are_torch_s_files() -> None:
    """TORCH_EXPORT_FILES and TORCH_FILES hide no stale reference of ours: each is torch's (from
    the release that has it), and not a file of this repository."""
    torch_dir, release = _torch_dir()
    assert all((torch_dir / p).is_file() and not (ROOT / p).exists() for p in TORCH_EXPORT_FILES)
    for name, (path, since) in TORCH_FILES.items():
        assert name not in _repo_file_names() and Path(path).name == name
        if release >= since:
            assert (torch_dir / path).is_file(), (name, path)
