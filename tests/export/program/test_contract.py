"""A program's shape contract and the asserts it puts in the graph (issue 33, items 1 and 3).

Oracle, per model of tests/support/deploy_models.py and on a grid of sizes: the contract admits
exactly the calls ``ep.module()`` runs, each run matches eager; with torch's guard function gone
(``ep.module()`` called from a file whose path names ``executorch``: torch 2.13-2.15 then build no
``_guards_fn``) the graph's own asserts refuse the same calls, in the causes' words; a saved and
loaded program and ``run_decompositions()`` refuse the same calls. Tables: the words of a few
refusals; what the graph asserts and what it leaves to torch.
"""

from __future__ import annotations

import importlib.util
import io
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import export
from deploy_models import CASES, case, first, grid, outcome
from export import RefusedInputError
from shapes.contract import Contract
from shapes.errors import RefusedInputError as ContractRefusal


def _export(name: str) -> tuple[Any, torch.nn.Module, tuple[torch.Tensor, ...]]:
    model, args, spec = case(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ep = export.export(model, args, dynamic_shapes=spec)
    return ep, model, args


@pytest.fixture(scope="module")
def programs() -> dict[str, tuple[Any, torch.nn.Module, tuple[torch.Tensor, ...]]]:
    return {c.name: _export(c.name) for c in CASES}


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_the_contract_admits_exactly_what_the_program_runs(c: Any, programs: dict[str, Any]) -> None:
    ep, model, args = programs[c.name]
    contract = ep.symshape.contract
    assert isinstance(contract, Contract)
    module = ep.module()
    ran = 0
    for call in grid(ep, args, c.sizes):
        runs, got = outcome(module, call)
        admitted = not contract.failures_of(call)
        assert runs == admitted, (c.name, [t.shape for t in call], got if not runs else contract.failures_of(call))
        if runs:
            eager_runs, want = outcome(model, call)
            assert eager_runs and torch.allclose(first(got), first(want), atol=1e-5), (c.name, [t.shape for t in call])
            ran += 1
        else:
            assert isinstance(got, RefusedInputError), (c.name, [t.shape for t in call], repr(got))
    assert ran > 0


def _load_probe(folder: Path) -> Any:
    """A module in a folder named like ExecuTorch's: torch's ``_ok_to_generate_guards_fn``
    walks the calling frames and builds no guard function under such a path."""
    folder.mkdir()
    path = folder / "probe.py"
    path.write_text("def module_of(ep):\n    return ep.module()\n")
    spec = importlib.util.spec_from_file_location("executorch_probe", path)
    assert spec is not None and spec.loader is not None
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    return probe


@pytest.mark.parametrize("name", ["cat64", "product", "prefix", "groups AUTO"])
def test_without_torchs_guard_function_the_graph_asserts_refuse_the_same(name: str, programs: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    ep, _, args = programs[name]
    probe = _load_probe(tmp_path / "executorch_venv")
    bare = probe.module_of(ep)
    assert not isinstance(getattr(bare, "_guards_fn", None), torch.nn.Module)  # torch left it out
    sizes = next(c.sizes for c in CASES if c.name == name)
    for call in grid(ep, args, sizes):
        runs, got = outcome(bare, call)
        assert runs == (not ep.symshape.contract.failures_of(call)), (name, [t.shape for t in call])
        if not runs:
            assert isinstance(got, RefusedInputError), repr(got)


@pytest.mark.parametrize("name", ["kv step", "tiny encoder"])
def test_a_saved_and_loaded_program_keeps_its_contract_and_its_refusals(name: str, programs: dict[str, Any]) -> None:
    ep, _, args = programs[name]
    buffer = io.BytesIO()
    export.save(ep, buffer)
    buffer.seek(0)
    loaded = export.load(buffer)
    assert loaded.symshape.contract == ep.symshape.contract
    module, again = ep.module(), loaded.module()
    for call in grid(ep, args, (1, 2, 5)):
        runs, got = outcome(module, call)
        runs_again, got_again = outcome(again, call)
        assert runs == runs_again, [t.shape for t in call]
        if not runs:
            assert str(got_again) == str(got)


@pytest.mark.parametrize("name", ["cat64", "prefix", "one branch"])
def test_run_decompositions_keeps_the_asserts_and_the_refusals(name: str, programs: dict[str, Any]) -> None:
    ep, _, args = programs[name]
    decomposed = ep.run_decompositions()
    mine = [n.args[1] for n in ep.graph.nodes if n.target is torch.ops.aten._assert_scalar.default]
    theirs = [n.args[1] for n in decomposed.graph.nodes if n.target is torch.ops.aten._assert_scalar.default]
    assert set(mine) <= set(theirs)
    sizes = next(c.sizes for c in CASES if c.name == name)
    for call in grid(ep, args, sizes):
        assert outcome(decomposed.module(), call)[0] == (not ep.symshape.contract.failures_of(call)), \
            [t.shape for t in call]


WORDS = [
    ("tiny encoder", (torch.randn(2, 6, 16), torch.ones(2, 6)),
     ["tokens.size(1) must be divisible by 4 (tokens.size(1) = 4 * _seq; got tokens.size(1) = 6)"]),
    ("tiny encoder", (torch.randn(3, 8, 16), torch.ones(2, 8)),
     ["mask.size(0) must equal tokens.size(0) (got mask.size(0) = 2, tokens.size(0) = 3)"]),
    ("kv step", (torch.randn(2, 3, 8), torch.randn(2, 5, 8), torch.ones(2, 9)),
     ["past.size(1) + q.size(1) == mask.size(1) (got past.size(1) = 5, q.size(1) = 3, mask.size(1) = 9)",
      "needed at "]),
    ("one branch", (torch.randn(1, 4),),
     ["x.size(0) must be >= 2 (the export assumed it: sizes 0 and 1 are specialized while tracing; got x.size(0) = 1)"]),
    ("doubled", (torch.randn(3, 4), torch.randn(5, 4)), ["z.size(0) must equal 2 * x.size(0)", "got z.size(0) = 5, x.size(0) = 3"]),
]


@pytest.mark.parametrize(("name", "call", "words"), WORDS, ids=[f"{w[0]}: {w[2][0][:30]}" for w in WORDS])
def test_a_refusal_reads_like_a_cause(name: str, call: tuple[torch.Tensor, ...], words: list[str],
                                      programs: dict[str, Any]) -> None:
    ep, _, _ = programs[name]
    for check in (ep.module(), ep.symshape.contract.check):
        with pytest.raises(ContractRefusal) as caught:
            check(*call)
        for w in words:
            assert w in str(caught.value), str(caught.value)
        assert "Guard failed" not in str(caught.value) and " s7" not in str(caught.value)


def _asserted(ep: Any) -> list[str]:
    return [n.args[1] for n in ep.graph.nodes if n.target is torch.ops.aten._assert_scalar.default]


def test_the_graph_asserts_what_torch_holds_as_distinct_symbols_only(programs: dict[str, Any]) -> None:
    """A relation between dims torch keeps as separate symbols is an assert in the graph (AOTI
    keeps it); two dims torch holds as one symbol (a shared Dim, a derived dim) compare a
    symbol with itself, which no graph can check: the contract and torch's input checks do."""
    relations = {"cat64": "x.size(0) + y.size(0) must be divisible by 32", "product": "must equal y.size(0) * y.size(1)",
                 "prefix": "x.size(1) >= y.size(1)"}
    for name, words in relations.items():
        asserted = _asserted(programs[name][0])
        assert any(words in a for a in asserted), (name, asserted)
        assert len(asserted) == len(set(asserted)), asserted
    tiny = " ".join(_asserted(programs["tiny encoder"][0]))
    assert "must equal" not in tiny and "divisible by 4" not in tiny
    assert all(a.startswith("symshape: ") for name in relations for a in _asserted(programs[name][0]))
