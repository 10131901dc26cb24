"""``export.diagnose.value_reads``: which expression of the user's code holds a data-dependent size.

Fast and torch-free: the user's source is registered in ``linecache`` under a made-up file name."""

from __future__ import annotations

import linecache

import pytest

from export.diagnose.value_reads import ValueRead, size_read
from export.tracing.provenance import UserFrame

SOURCE = """\
def forward(x, mask):
    y = x.nonzero()
    z = y.shape[0]
    if z > 3:
        return 1
    if y.size(0) > 2:
        return 2
    n = len(y)
    w = y.size()[1]
    if n + w > 4:
        return 3
    k = y.numel()
    if k > 1:
        return 4
    if y.shape[0] > mask.shape[0]:
        return 5
    def inner(t):
        return t.shape[0]
    q = y.size()
    return q
"""
FILE = "/symshape-test/value_reads_model.py"


@pytest.fixture(autouse=True)
def _source() -> None:
    linecache.cache[FILE] = (len(SOURCE), None, SOURCE.splitlines(keepends=True), FILE)


def _at(line: int, function: str = "forward") -> UserFrame:
    return UserFrame(FILE, line, function, SOURCE.splitlines()[line - 1].strip())


@pytest.mark.parametrize("tensor, line, name, assigned_at", [
    ("y", 4, "z", 3),  # compared after z = y.shape[0]
    ("y", 3, "y.shape[0]", None),  # read inline where it is decided
    ("y", 6, "y.size(0)", None),
    ("y", 15, "y.shape[0]", None),  # mask's size is another tensor's
    ("mask", 15, "mask.shape[0]", None),
    ("y", 18, None, None),  # t, not y
    ("y", 13, None, None),  # k = y.numel(): a product of dims, not one size
    ("y", 10, None, None),  # two reads (n and w): which one is it?
    ("y", 20, None, None),  # q = y.size(): a torch.Size
    ("x", 4, None, None),  # z reads y, not x
])
def test_size_read(tensor: str, line: int, name: str | None, assigned_at: int | None) -> None:
    function = "inner" if line == 18 else "forward"
    read = size_read(tensor, _at(line, function))
    if name is None:
        assert read is None
        return
    assert isinstance(read, ValueRead) and read.name == name
    if assigned_at is None:
        assert read.frame is None
    else:
        assert read.frame == UserFrame(FILE, assigned_at, function, SOURCE.splitlines()[assigned_at - 1].strip())


def test_len_is_a_read_of_one_size() -> None:
    read = size_read("y", _at(8))
    assert read == ValueRead("len(y)", None)


@pytest.mark.parametrize("filename, line", [
    ("/symshape-test/no_such_file.py", 3),  # no source
    (FILE, 200),  # outside every function
])
def test_no_source_no_read(filename: str, line: int) -> None:
    assert size_read("y", UserFrame(filename, line, "forward", "")) is None


def test_a_file_that_does_not_parse() -> None:
    bad = "/symshape-test/broken.py"
    linecache.cache[bad] = (10, None, ["def f(:\n"], bad)
    assert size_read("y", UserFrame(bad, 1, "f", "def f(:")) is None


def _whole_file_function(filename: str, line: int) -> tuple[int, int] | None:
    """The oracle: the innermost function around ``line`` from a parse of the whole file."""
    import ast

    best = None
    for node in ast.walk(ast.parse("".join(linecache.getlines(filename)))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= line <= node.end_lineno:
            if best is None or node.lineno >= best.lineno:
                best = node
    return None if best is None else (best.lineno, best.end_lineno)


@pytest.mark.parametrize("module", ["tests/e2e/corpus/cases.py", "export/diagnose/value_reads.py",
                                    "transformers.models.gpt2.modeling_gpt2", "torch.nn.modules.conv"])
def test_the_enclosing_def_block_finds_what_a_whole_file_parse_finds(module: str) -> None:
    """Every line of real model files: the function found from its ``def`` block alone (the
    fast path) is the one a parse of the whole file finds."""
    from pathlib import Path

    from export.diagnose.value_reads import _function_at

    if module.endswith(".py"):
        filename = str(Path(__file__).resolve().parents[3] / module)
    else:
        filename = pytest.importorskip(module).__file__
    for line in range(1, len(linecache.getlines(filename)) + 1):
        found = _function_at(filename, line)
        assert (None if found is None else (found.lineno, found.end_lineno)) == _whole_file_function(filename, line), line
