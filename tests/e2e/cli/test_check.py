"""``symshape check`` and ``python -m solver check`` on real saved programs (issue 33, item 3).

The README's TinyEncoder (``tests/support/deploy_models``) exported and saved with
``export.save``: the command admits exactly the sizes the program runs, and refuses the others
in the words the program itself raises; ``symshape check`` and ``python -m solver check`` print
the same and exit the same; ``python -m solver check`` runs with torch blocked, on the ``.pt2``
and on a contract sidecar beside a program file.
"""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import export
from deploy_models import case, grid, outcome
from export.cli import main as symshape_main
from shapes.contract_files import write_sidecar

ROOT = Path(__file__).resolve().parents[3]
SIMPLE = Path(__file__).resolve().parent / "models" / "simple.py"
ADMITTED = ("--shape", "tokens=2,8,16", "--shape", "mask=2,8")
REFUSED = ("--shape", "tokens=3,6,16", "-s", "mask=2,6")
UNKNOWN = ("--shape", "tokens=2,8,16", "--shape", "q=2")

BLOCKED = textwrap.dedent("""
    import importlib.abc, sys

    class BlockTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("torch", "export"):
                raise ImportError(f"{name!r} is blocked in this test")
            return None

    sys.meta_path.insert(0, BlockTorch())
    from solver.__main__ import main
    code = main(sys.argv[1:])
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "export"))
    assert not leaked, leaked
    sys.stdout.flush()
    sys.exit(code)
""")
"""``python -m solver`` with torch (and symshape's torch side, ``export``) blocked."""


def symshape() -> list[str]:
    exe = shutil.which("symshape", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "export"]


def run(argv: list[str], cwd: Path = ROOT) -> tuple[int, str, str]:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, export.SymshapeProgram, tuple[torch.Tensor, ...]]:
    model, args, spec = case("tiny encoder")
    ep = export.export(model, args, dynamic_shapes=spec)
    path = tmp_path_factory.mktemp("check") / "tiny.pt2"
    export.save(ep, str(path))
    return path, export.load(str(path)), args


def refusal(ep: export.SymshapeProgram, *shapes: tuple[int, ...]) -> str:
    ran, error = outcome(ep.module(), tuple(torch.ones(*s) for s in shapes))
    assert not ran and isinstance(error, export.RefusedInputError), error
    return str(error)


def in_process(*argv: str) -> tuple[int, str, str]:
    """``symshape ARGV`` in this process (no torch start-up: the same code as the console script)."""
    out, err = io.StringIO(), io.StringIO()
    code = symshape_main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_symshape_check_refuses_and_exits_as_documented(saved) -> None:
    """The console script itself (each run starts torch: two runs only; the other cases run
    in-process below, and as ``python -m solver check`` in a subprocess)."""
    path, ep, _ = saved
    code, out, err = run([*symshape(), "check", str(path), *REFUSED])
    assert (code, err) == (1, "") and out == refusal(ep, (3, 6, 16), (2, 6)) + "\n"
    code, out, err = run([*symshape(), "check", str(path), *UNKNOWN])
    assert (code, out) == (2, "")
    assert err == "symshape: error: --shape q=2: no input named 'q' in the contract (its inputs: tokens, mask)\n"


def test_python_m_solver_check_is_the_same_command(saved) -> None:
    path = saved[0]
    assert in_process("check", str(path), *ADMITTED) == (
        0, "the exported program admits these inputs:\n  tokens: [2, 8, 16]\n  mask:   [2, 8]\n", "")
    missing = str(path.with_name("nothing.pt2"))
    assert in_process("check", missing) == (2, "", f"symshape: error: {missing}: no such file\n")
    for argv in ((), ADMITTED, REFUSED, UNKNOWN, ("--json",), (*REFUSED, "--json"), (*ADMITTED, "--show")):
        ours = in_process("check", str(path), *argv)
        solvers = run([sys.executable, "-m", "solver", "check", str(path), *argv])
        assert solvers[:2] == ours[:2], argv
        assert solvers[2] == ours[2].replace("symshape: error: ", "error: "), argv


def test_python_m_solver_check_runs_without_torch(saved, tmp_path: Path) -> None:
    path, ep, _ = saved
    program = tmp_path / "tiny.pte"  # a program file without a contract of its own: its sidecar is read
    program.write_bytes(b"\x00\x00\x00\x00ET12 (not a real ExecuTorch program)")
    sidecar = write_sidecar(ep.symshape.contract, program)
    assert run([sys.executable, "-c", BLOCKED, "check", str(path), *ADMITTED])[:2] == (
        0, "the exported program admits these inputs:\n  tokens: [2, 8, 16]\n  mask:   [2, 8]\n")
    code, out, err = run([sys.executable, "-c", BLOCKED, "check", str(path), "--show"])
    assert code == 0 and "  tokens: [batch, 4 * _seq, 16] float32" in out.splitlines(), err
    for where in (path, program, sidecar):
        code, out, err = run([sys.executable, "-c", BLOCKED, "check", str(where), *REFUSED])
        assert (code, err) == (1, "") and out == refusal(ep, (3, 6, 16), (2, 6)) + "\n", where
    code, _, err = run([sys.executable, "-c", BLOCKED.replace("from solver.__main__ import main", "import torch"),
                        "check", str(path)])
    assert code != 0 and "'torch' is blocked in this test" in err  # the blocker blocks


def test_check_admits_exactly_what_the_program_runs(saved) -> None:
    """The oracle: over a grid of every dynamic dim, ``symshape check`` (in-process) exits 0
    where ``ep.module()`` runs, else 1 with the text the program raises."""
    path, ep, args = saved
    module = ep.module()
    calls = grid(ep, args, (1, 2, 6, 32, 132))
    assert len(calls) == 5 ** 4
    admitted = 0
    for call in calls:
        argv = ["check", str(path), *(a for t, name in zip(call, ("tokens", "mask"))
                                      for a in ("-s", f"{name}={','.join(map(str, t.shape))}"))]
        code, out, _ = in_process(*argv)
        ran, error = outcome(module, call)
        assert code == (0 if ran else 1), (argv, error)
        if not ran:
            assert isinstance(error, export.RefusedInputError) and out == f"{error}\n", argv
        admitted += ran
    assert 0 < admitted < len(calls)


def test_nested_input_names_as_the_docs_quote_them(tmp_path: Path) -> None:
    """``d['a']`` and ``d[b][0]`` in a shell, quoted as docs/cli.md says."""
    out = tmp_path / "n.pt2"
    code = symshape_main(["export", f"{SIMPLE}:make_nested", "-d", "x:0:b", "-d", "d['a']:0:auto", "-d", "d.b[0]:0:b",
                          "-d", "d[b][0]:1:static", "-o", str(out), "-q"], stdout=io.StringIO(), stderr=io.StringIO())
    assert code == 0 and out.exists()
    solver = f"{shlex.quote(sys.executable)} -m solver check {shlex.quote(str(out))}"
    proc = subprocess.run(f"""{solver} --shape x=7,3 --shape "d['a']=5" --shape 'd[b][0]=7,3' &&
                              {solver} --shape x=7,3 --shape 'd[a]=5' --shape "d['b'][0]=6,3" """,
                          shell=True, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout == ("the exported program admits these inputs:\n  x:         [7, 3]\n  d['a']:    [5]\n"
                           "  d['b'][0]: [7, 3]\n"
                           "the exported program refuses these inputs:\n"
                           "  d['b'][0].size(0) must equal x.size(0) (got d['b'][0].size(0) = 6, x.size(0) = 7)\n")
