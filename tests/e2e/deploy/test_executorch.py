"""ExecuTorch with the program's contract (issue 33, item 4): real lowering, the real runtime.

Oracles, per model of tests/support/deploy_models.py with every dim given a max (ExecuTorch
plans memory for the largest size) and on the same grids as the contract's own oracle:

* the checked program (``executorch_load``) refuses exactly the calls ``ep.module()`` refuses,
  with the same reason lines, and runs the others with ``ep.module()``'s results;
* the bare runtime (``executorch.runtime``, no contract) runs calls the program refuses (it
  keeps no check): at batch 1, ``if x.shape[0] == 1`` runs the other branch, silently wrong;
* a dim with no max is an InputError naming each such dim and the ``Dim`` to bound;
* ``unbounded="example"``: every call the capped contract admits runs on the ``.pte`` (and
  matches eager), every call the ``.pte`` refuses for memory (error 0x10) the contract refuses,
  in words naming the cap. The ``.pte`` admits by element count per input, the contract per
  dim: the calls it refuses that the ``.pte`` would run are counted (:data:`NUMEL_GAP`).

Skipped where ExecuTorch does not import (it installs beside torch 2.14.1 only).
"""

from __future__ import annotations

import re
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.export import Dim

try:
    from executorch.exir import to_edge
    from executorch.runtime import Runtime

    from export.deploy.executorch import executorch_load, executorch_lower
except Exception as e:  # noqa: BLE001 - a broken install skips like a missing one
    pytest.skip(f"ExecuTorch does not import here (it installs beside torch 2.14.1): {type(e).__name__}: {e}",
                allow_module_level=True)

import export  # noqa: E402
from deploy_models import CASES, case, first, grid, outcome  # noqa: E402
from export import InputError, RefusedInputError, SymshapeWarning  # noqa: E402
from export.errors import ExportError  # noqa: E402
from shapes.contract_files import read_contract, sidecar_path  # noqa: E402

MAX = 64


def _bounded(name: str) -> Any:
    """The spec of deploy_models' case ``name`` with every dim given a max of :data:`MAX`."""
    auto = Dim.AUTO(max=MAX)
    if name == "cat64":
        return {"x": {0: auto}, "y": {0: auto}}
    if name == "groups AUTO":
        return {"x": {0: auto, 1: auto}}
    if name == "product":
        return {"x": {0: auto, 1: auto}, "y": {0: auto, 1: auto}}
    if name == "kv step":
        b = Dim("b", max=MAX)
        return {"q": {0: b, 1: Dim("s", max=MAX)}, "past": {0: b, 1: Dim("p", max=MAX)},
                "mask": {0: b, 1: Dim("m", max=MAX)}}
    if name == "prefix":
        b = Dim("b", max=MAX)
        return {"x": {0: b, 1: Dim("n", max=MAX)}, "y": {0: b, 1: Dim("k", max=MAX)}}
    if name == "tiny encoder":
        batch, seq = Dim("batch", max=MAX), Dim("_seq", min=1, max=32)
        return {"tokens": {0: batch, 1: 4 * seq}, "mask": {0: batch, 1: 4 * seq}}
    if name == "one branch":
        return {"x": {0: Dim("b", max=MAX)}}
    if name == "doubled":
        b = Dim("b", max=MAX)
        return {"x": {0: b}, "z": {0: 2 * b}}
    if name == "view64":
        return {"x": {0: 64 * Dim("_n", max=MAX)}}
    raise KeyError(name)


SIZES = {"kv step": (1, 2, 5)}
"""Smaller grids where deploy_models' make thousands of calls (the file's time)."""


def _sizes(name: str, *, every: bool = False) -> tuple[int, ...]:
    """The sizes of ``name``'s grid: deploy_models', or :data:`SIZES`' unless ``every``."""
    return (None if every else SIZES.get(name)) or next(c.sizes for c in CASES if c.name == name)


def _export(model: torch.nn.Module, args: tuple[torch.Tensor, ...], spec: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export.export(model, args, dynamic_shapes=spec)


@pytest.fixture(scope="module")
def lowered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, torch.nn.Module, tuple[torch.Tensor, ...], Path]]:
    """Each case exported with its bounded spec and lowered: (program, model, example, .pte)."""
    folder = tmp_path_factory.mktemp("pte")
    out = {}
    for c in CASES:
        model, args, _ = c.make()
        ep = _export(model, args, _bounded(c.name))
        assert not ep.symshape.contract.unbounded(), c.name
        out[c.name] = (ep, model, args, executorch_lower(ep, folder / f"{c.name.replace(' ', '_')}.pte"))
    return out


def _size(contract: Any, call: tuple[torch.Tensor, ...], name: str) -> int:
    """The size of the dim named ``name`` (``x.size(0)``) in ``call``."""
    symbol = next(d.symbol for d in contract.dims if d.name == name)
    return next(t.shape[d] for entry, t in zip(contract.inputs, call) for d, s in enumerate(entry.shape) if s == symbol)


def _reasons(e: BaseException) -> list[str]:
    return [line.strip() for line in str(e).splitlines()[1:]]


def _bare(pte: Path) -> Any:
    """The ``.pte``'s method run by ExecuTorch's runtime alone (no contract), called like the program."""
    method = Runtime.get().load_program(pte).load_method("forward")
    return lambda *call: method.execute(call)



@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_the_checked_program_refuses_what_the_program_refuses_and_runs_the_rest(name: str, lowered: dict[str, Any]) -> None:
    ep, model, args, pte = lowered[name]
    checked, module, bare = executorch_load(pte), ep.module(), _bare(pte)
    counts: Counter[str] = Counter()
    for call in grid(ep, args, _sizes(name)):
        runs, want = outcome(module, call)
        ran, got = outcome(checked, call)
        shapes = [tuple(t.shape) for t in call]
        assert ran == runs, (name, shapes, got if not ran else want)
        if runs:
            assert torch.allclose(first(got), first(want), atol=1e-5), (name, shapes)
            counts["ran"] += 1
            continue
        assert isinstance(got, RefusedInputError), (name, shapes, repr(got))
        assert _reasons(got) == _reasons(want), (name, shapes)
        counts["refused"] += 1
        bare_runs, _ = outcome(bare, call)
        counts["refused, the bare runtime ran it"] += bare_runs
    assert counts["ran"] > 0 and counts["refused"] > 0, counts
    print(name, dict(counts))


def test_the_bare_runtime_runs_batch_1_down_the_wrong_branch(lowered: dict[str, Any]) -> None:
    """Why the contract matters: ExecuTorch keeps no check, so the size-1 call the program
    refuses (its trace assumed ``x.size(0) >= 2``) runs ``x + 1`` where eager runs ``x * 2``."""
    ep, model, _, pte = lowered["one branch"]
    x = torch.full((1, 4), 3.0)
    bare = _bare(pte)(x)[0]
    assert not torch.allclose(bare, model(x)) and torch.equal(bare, x + 1)
    with pytest.raises(RefusedInputError, match=re.escape("x.size(0) must be >= 2 (the export assumed it")):
        executorch_load(pte)(x)


def test_the_sidecar_is_the_programs_contract_and_loads_with_the_pte(lowered: dict[str, Any], tmp_path: Path) -> None:
    ep, _, args, pte = lowered["kv step"]
    assert read_contract(sidecar_path(pte)) == ep.symshape.contract  # every dim bounded: nothing to cap
    alone = tmp_path / "alone.pte"
    alone.write_bytes(pte.read_bytes())
    with pytest.raises(InputError, match="no contract beside it"):
        executorch_load(alone)
    checked = executorch_load(alone, contract=ep.symshape.contract)
    assert torch.allclose(checked(*args), ep.module()(*args))
    assert torch.allclose(checked(q=args[0], past=args[1], mask=args[2]), ep.module()(*args))


# -- dims without a max ----------------------------------------------------------------------------

FIXES = {
    "groups AUTO": ["x.size(0) (Dim.AUTO): Dim.AUTO(max=...) (classic: dynamic_dim(x, 0) <= ...)",
                    "x.size(1) (Dim.AUTO): Dim.AUTO(max=...) (classic: dynamic_dim(x, 1) <= ...)"],
    "product": ["x.size(0) (Dim.AUTO): Dim.AUTO(max=...)", "y.size(1) (Dim.AUTO): Dim.AUTO(max=...)"],
    "kv step": ["q.size(0), past.size(0), mask.size(0) (Dim b): b = Dim('b', max=...)",
                "q.size(1) (Dim s): s = Dim('s', max=...)", "past.size(1) (Dim p): p = Dim('p', max=...)",
                "mask.size(1) (Dim m): m = Dim('m', max=...)"],
    "prefix": ["x.size(0), y.size(0) (Dim b): b = Dim('b', max=...)", "x.size(1) (Dim n): n = Dim('n', max=...)",
               "y.size(1) (Dim k): k = Dim('k', max=...)"],
    "tiny encoder": ["tokens.size(0), mask.size(0) (Dim batch): batch = Dim('batch', max=...)"],
    "one branch": ["x.size(0) (Dim b): b = Dim('b', max=...)"],
    "doubled": ["x.size(0), z.size(0) (Dim b, 2 * b): b = Dim('b', max=...)"],
    "view64": ["x.size(0) (Dim 64 * _n): _n = Dim('_n', max=...)"],
}
"""The cases whose own spec leaves a dim without a max (cat64's dims are bounded by its
reshape), and what the error must say."""


@pytest.fixture(scope="module")
def unbounded() -> dict[str, tuple[Any, torch.nn.Module, tuple[torch.Tensor, ...]]]:
    out = {}
    for name in FIXES:
        model, args, spec = case(name)
        out[name] = (_export(model, args, spec), model, args)
    return out


@pytest.mark.parametrize("name", list(FIXES))
def test_a_dim_without_a_max_is_an_input_error_naming_it_and_the_fix(name: str, unbounded: dict[str, Any],
                                                                     tmp_path: Path) -> None:
    ep = unbounded[name][0]
    with pytest.raises(InputError) as caught:
        executorch_lower(ep, tmp_path / "m.pte")
    text = str(caught.value)
    for d in ep.symshape.contract.unbounded():
        assert d.name in text, text
    for words in FIXES[name] + ["ExecuTorch plans each tensor's memory for its largest size", "unbounded='example'"]:
        assert words in text, text
    assert not (tmp_path / "m.pte").exists()


NUMEL_GAP = {"groups AUTO": 2, "product": 38, "kv step": 6, "prefix": 17, "tiny encoder": 5, "one branch": 0,
             "doubled": 0, "view64": 0}
"""Calls ``ep.module()`` runs and the ``.pte`` runs too, that the example mode's contract
refuses: ExecuTorch refuses an input only when it has more elements than it was planned for
(``(4, 4)`` in a ``(2, 8)`` plan runs), the contract each dim above its traced size. Measured;
the best would be 0 (a contract condition on the product of an input's dims)."""


@pytest.mark.parametrize("name", list(FIXES))
def test_the_example_mode_refuses_in_words_what_the_pte_cannot_run(name: str, unbounded: dict[str, Any],
                                                                  tmp_path: Path) -> None:
    ep, model, args = unbounded[name]
    with pytest.warns(SymshapeWarning, match="planned memory at the traced sizes"):
        pte = executorch_lower(ep, tmp_path / "m.pte", unbounded="example")
    checked, module, bare = executorch_load(pte), ep.module(), _bare(pte)
    assert not checked.contract.unbounded()
    counts: Counter[str] = Counter()
    for call in grid(ep, args, _sizes(name, every=True)):
        runs, want = outcome(module, call)
        if not runs:
            continue
        shapes = [tuple(t.shape) for t in call]
        admitted, got = outcome(checked, call)
        bare_runs, bare_got = outcome(bare, call)
        if admitted:
            assert bare_runs and torch.allclose(first(got), first(want), atol=1e-5), (name, shapes, bare_got)
            counts["ran"] += 1
            continue
        assert isinstance(got, RefusedInputError), (name, shapes, repr(got))
        for reason in _reasons(got):  # each names a dim above its cap, and its size
            found = re.fullmatch(r"(\S+) must be <= (\d+) \(the .pte's memory is planned at its traced size: "
                                 r"(?:Dim \w+|its Dim.AUTO) has no max; got \S+ = \d+\)", reason)
            assert found, reason
            assert _size(checked.contract, call, found.group(1)) > int(found.group(2)), (name, shapes, reason)
        if bare_runs:
            counts["refused, the .pte runs it"] += 1
        else:
            assert "failed with error 0x10" in str(bare_got), (name, shapes, bare_got)
            counts["refused, as the .pte (0x10)"] += 1
    assert counts["ran"] > 0 and counts["refused, as the .pte (0x10)"] > 0, counts
    assert counts["refused, the .pte runs it"] == NUMEL_GAP[name], counts
    print(name, dict(counts))


def test_the_plan_holds_every_size_in_the_box_where_executorchs_own_does_not(unbounded: dict[str, Any],
                                                                             tmp_path: Path) -> None:
    """ExecuTorch's own planning bounds each size expression as a whole and plans one with no
    finite bound at its traced value: the tiny encoder's ``batch * (seq // 4)`` (batch
    unbounded, ``seq <= 128``) at 2 * 8, so ``seq = 128`` fails inside the method even at the
    traced batch. executorch_lower plans each dim over its range (batch at its traced size)."""
    ep, model, _ = unbounded["tiny encoder"]
    call = (torch.randn(2, 128, 16), torch.ones(2, 128))
    theirs = tmp_path / "theirs.pte"
    theirs.write_bytes(to_edge(ep).to_executorch().buffer)
    runs, got = outcome(_bare(theirs), call)
    assert not runs and "error 0x1" in str(got), got
    with pytest.warns(SymshapeWarning):
        ours = executorch_lower(ep, tmp_path / "ours.pte", unbounded="example")
    assert torch.allclose(executorch_load(ours)(*call), model(*call), atol=1e-5)


# -- what else is refused, in words -----------------------------------------------------------------

class TakesN(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x[:n] * 2


class Zeros(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.sum().int().item())


class Inverse(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.inv(x)


def test_what_cannot_be_lowered_is_an_error_in_one_block(lowered: dict[str, Any], tmp_path: Path) -> None:
    ep, model, args, pte = lowered["one branch"]
    with pytest.raises(InputError, match="needs a program exported by symshape"):
        executorch_lower(torch.export.export(model, args), tmp_path / "m.pte")
    with pytest.raises(InputError, match="unbounded must be 'raise' or 'example', got 'cap'"):
        executorch_lower(ep, tmp_path / "m.pte", unbounded="cap")
    takes_n = _export(TakesN(), (torch.randn(8, 3), 4), {"x": {0: Dim("b", min=8, max=64)}, "n": Dim("n", max=8)})
    with pytest.raises(InputError, match=r"drops the value of a dynamic int input \(n\)"):
        executorch_lower(takes_n, tmp_path / "n.pte")
    zeros = _export(Zeros(), (torch.ones(4, 3),), {"x": {0: Dim("b", max=MAX)}})
    words = r"aten_full_default \(at test_executorch\.py:\d+: " + re.escape("return torch.zeros(x.sum().int().item())) "
                                                                         "has a size with none (u")
    with pytest.raises(ExportError, match=words):
        executorch_lower(zeros, tmp_path / "z.pte")
    inverse = _export(Inverse(), (torch.randn(4, 3, 3),), {"x": {0: Dim("b", max=MAX)}})
    with pytest.raises(ExportError, match="could not lower the program: to_edge raised SpecViolationError: Operator "
                                          "torch._ops.aten.linalg_inv_ex.default is not in Core ATen opset") as caught:
        executorch_lower(inverse, tmp_path / "i.pte")
    assert caught.value.__cause__ is None and caught.value.__suppress_context__ and caught.value.__context__ is not None
    assert not list(tmp_path.glob("*.pte"))
    (tmp_path / "bad.pte").write_bytes(b"not a program")
    (tmp_path / "bad.pte.symshape.json").write_text(sidecar_path(pte).read_text())
    with pytest.raises(InputError, match="bad.pte: ExecuTorch's runtime cannot load it"):
        executorch_load(tmp_path / "bad.pte")


def test_a_wrong_dtype_is_refused_in_words_and_a_strided_input_runs(lowered: dict[str, Any]) -> None:
    ep, model, _, pte = lowered["one branch"]
    checked = executorch_load(pte)
    with pytest.raises(RefusedInputError, match=r"x must be float32 \(the .pte computes in float32; got float64\)"):
        checked(torch.randn(3, 4, dtype=torch.float64))
    strided = torch.randn(4, 8)[:, ::2]
    assert torch.allclose(checked(strided), model(strided))


def test_the_how_to_of_docs_deploying(tmp_path: Path) -> None:
    """The example of docs/deploying.md's ExecuTorch section, as written there."""
    model, (x,), _ = case("one branch")
    ep = _export(model, (x,), {"x": {0: Dim("b", max=MAX)}})
    pte = executorch_lower(ep, tmp_path / "model.pte")
    assert sidecar_path(pte).name == "model.pte.symshape.json"
    program = executorch_load(pte)
    assert torch.equal(program(torch.ones(5, 4)), torch.full((5, 4), 2.0))
    for n, words in [(1, "x.size(0) must be >= 2 (the export assumed it: sizes 0 and 1 are specialized while tracing; "
                         "got x.size(0) = 1)"), (65, "x.size(0) must be <= 64 (got x.size(0) = 65)")]:
        with pytest.raises(RefusedInputError) as caught:
            program(torch.ones(n, 4))
        assert str(caught.value) == f"the exported program refuses these inputs:\n  {words}"


# -- a torchvision conv net with a dynamic image size -----------------------------------------------

def test_a_torchvision_resnet_with_a_dynamic_image_size(tmp_path: Path) -> None:
    """torchvision's ResNet with one BasicBlock per stage (resnet18 has two: 24 s to lower and
    seconds per call on ExecuTorch's portable kernels, too slow for this file), dynamic batch,
    height and width: the checked program runs what ``ep.module()`` runs, as eager does, and
    refuses what it refuses, in the same words."""
    resnet = pytest.importorskip("torchvision.models.resnet", reason="torchvision does not import here")
    torch.manual_seed(0)
    model = resnet.ResNet(resnet.BasicBlock, [1, 1, 1, 1], num_classes=10).eval()
    spec = {"x": {0: Dim("batch", max=4), 2: Dim("h", max=64), 3: Dim("w", max=64)}}
    ep = _export(model, (torch.randn(2, 3, 48, 40),), spec)
    checked, module = executorch_load(executorch_lower(ep, tmp_path / "resnet.pte")), ep.module()
    counts: Counter[str] = Counter()
    gen = torch.Generator().manual_seed(0)
    for b, h, w in [(1, 48, 40), (2, 1, 1), (1, 64, 17), (4, 33, 64), (1, 65, 32), (5, 8, 8), (0, 8, 8)]:
        x = torch.randn(b, 3, h, w, generator=gen)
        runs, want = outcome(module, (x,))
        ran, got = outcome(checked, (x,))
        assert ran == runs, ((b, h, w), got if not ran else want)
        if runs:
            assert torch.allclose(got, model(x), atol=1e-4), (b, h, w)
        else:
            assert isinstance(got, RefusedInputError) and _reasons(got) == _reasons(want), (got, want)
        counts["ran" if runs else "refused"] += 1
    assert counts == {"ran": 4, "refused": 3}, counts
