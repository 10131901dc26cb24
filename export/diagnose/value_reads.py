"""Which expression of the user's code holds a data-dependent size, read from the source.

torch knows a data-dependent size only as the tensor that made it (``y = x.nonzero()``
makes ``u0``). The user compared a *value*: ``y.shape[0]`` inline, or ``z`` after
``z = y.shape[0]``. :func:`size_read` finds that value in the source of the function that
made the decision, so a message can name it (and the line that computed it).
"""

from __future__ import annotations

import ast
import linecache
import re
import textwrap
from dataclasses import dataclass

from export.tracing.provenance import UserFrame

__all__ = ["ValueRead", "size_read"]

@dataclass(frozen=True, slots=True)
class ValueRead:
    """A size of a tensor as the user's code reads it: ``name`` (``z`` or ``y.shape[0]``)
    and ``frame``, the line that assigned it (None: read inline where it is compared)."""

    name: str
    frame: UserFrame | None


def size_read(tensor: str, where: UserFrame) -> ValueRead | None:
    """How the statement at ``where`` reads a size of the variable ``tensor``, or None
    (none, or more than one: the value cannot be told apart).

    >>> import tempfile, os
    >>> src = "def f(x):\\n    y = x.nonzero()\\n    z = y.shape[0]\\n    if z > 3:\\n        return 1\\n"
    >>> with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
    ...     _ = fh.write(src)
    >>> r = size_read("y", UserFrame(fh.name, 4, "f", "if z > 3:"))
    >>> r.name, r.frame.lineno, r.frame.code
    ('z', 3, 'z = y.shape[0]')
    >>> size_read("y", UserFrame(fh.name, 3, "f", "z = y.shape[0]")).name
    'y.shape[0]'
    >>> os.unlink(fh.name)
    """
    func = _function_at(where.filename, where.lineno)
    if func is None:
        return None
    stmt = _statement_at(func, where.lineno)
    if stmt is None:
        return None
    decided = _decided_part(stmt)
    found = {ast.unparse(n): ValueRead(ast.unparse(n), None) for n in ast.walk(decided) if _reads_size(n, tensor)}
    assigned = _assignments_before(func, where.lineno)
    for node in ast.walk(decided):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in assigned:
            a = assigned[node.id]
            if any(_reads_size(n, tensor) for n in ast.walk(a.value)):
                code = linecache.getline(where.filename, a.lineno).strip()
                found[node.id] = ValueRead(node.id, UserFrame(where.filename, a.lineno, where.function, code))
    return next(iter(found.values())) if len(found) == 1 else None  # two reads: which one is it?


def _function_at(filename: str, lineno: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The innermost function of ``filename`` that contains line ``lineno``: parsed from the
    enclosing ``def``'s block alone where that block parses on its own (a model file of
    thousands of lines costs a whole parse per data-dependent error otherwise), else from the
    whole file."""
    lines = linecache.getlines(filename)
    block = _enclosing_def(lines, lineno)
    if block is not None:
        start, end = block
        try:
            tree = ast.parse(textwrap.dedent("".join(lines[start - 1:end])))
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None:
            ast.increment_lineno(tree, start - 1)
            found = _innermost(tree, lineno)
            if found is not None:
                return found
    try:
        return _innermost(ast.parse("".join(lines)), lineno)
    except (SyntaxError, ValueError):
        return None


_DEF = re.compile(r"^(\s*)(async\s+)?def\s")


def _enclosing_def(lines: list[str], lineno: int) -> tuple[int, int] | None:
    r"""The lines ``[start, end]`` (1-based) of the innermost ``def`` block around ``lineno``,
    by indentation; None when there is none or the line is out of range.

    >>> src = ["class M:\n", "    def forward(self, x):\n", "        y = x\n", "\n", "        return y\n", "z = 1\n"]
    >>> _enclosing_def(src, 3), _enclosing_def(src, 6)
    ((2, 5), None)
    """
    if not 1 <= lineno <= len(lines):
        return None
    indent = _indent(lines[lineno - 1])
    for start in range(lineno - 1, 0, -1):
        line = lines[start - 1]
        if not line.strip():
            continue
        m = _DEF.match(line)
        if m and len(m.group(1)) < indent:
            end = lineno
            for k in range(lineno + 1, len(lines) + 1):
                text = lines[k - 1]
                if text.strip() and _indent(text) <= len(m.group(1)):
                    break
                end = k
            return start, end
        indent = min(indent, _indent(line)) if not line.lstrip().startswith(("#", ")", "]", "}")) else indent
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _innermost(tree: ast.AST, lineno: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _spans(node, lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return best


def _spans(node: ast.AST, lineno: int) -> bool:
    end = getattr(node, "end_lineno", None)
    return end is not None and getattr(node, "lineno", 0) <= lineno <= end


def _statement_at(func: ast.AST, lineno: int) -> ast.stmt | None:
    """The innermost statement of ``func`` that starts at ``lineno``, else spans it."""
    found = None
    for node in ast.walk(func):
        if isinstance(node, ast.stmt) and node is not func and _spans(node, lineno):
            if found is None or node.lineno >= found.lineno:
                found = node
    return found


def _decided_part(stmt: ast.stmt) -> ast.AST:
    """What a statement decides on: an ``if``'s / ``while``'s test, else the statement."""
    if isinstance(stmt, (ast.If, ast.While)):
        return stmt.test
    return stmt


def _assignments_before(func: ast.AST, lineno: int) -> dict[str, ast.Assign]:
    """The last plain assignment ``name = ...`` of each name before line ``lineno``."""
    out: dict[str, ast.Assign] = {}
    assigns = [n for n in ast.walk(func) if isinstance(n, ast.Assign) and n.lineno < lineno]
    for a in sorted(assigns, key=lambda n: n.lineno):
        for t in a.targets:
            if isinstance(t, ast.Name):
                out[t.id] = a
    return out


def _reads_size(node: ast.AST, tensor: str) -> bool:
    """``t.shape[i]``, ``t.size(i)``, ``t.size()[i]`` or ``len(t)`` of ``t = tensor``: one dim,
    so the value is the size itself (``t.numel()`` is a product of dims: not a read of one)."""
    if isinstance(node, ast.Subscript):
        base = node.value
        if isinstance(base, ast.Attribute) and base.attr == "shape" and _is_name(base.value, tensor):
            return True
        return isinstance(base, ast.Call) and _is_method(base, tensor) and not base.args
    if isinstance(node, ast.Call):
        if _is_method(node, tensor):
            return len(node.args) == 1  # t.size() alone is a torch.Size
        return isinstance(node.func, ast.Name) and node.func.id == "len" and len(node.args) == 1 \
            and _is_name(node.args[0], tensor)
    return False


def _is_method(call: ast.Call, tensor: str) -> bool:
    f = call.func
    return isinstance(f, ast.Attribute) and f.attr == "size" and _is_name(f.value, tensor)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name
