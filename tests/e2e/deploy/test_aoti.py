"""AOTInductor runs what ``ep.module()`` runs and refuses what it refuses (issue 33, items 1, 2, 5).

Each model of tests/support/deploy_models.py is exported by symshape and compiled by the real
AOTInductor (the CPU, this machine's C++ compiler) with :func:`export.deploy.aoti_compile_and_package`.

Oracle, on each model's grid of sizes:

* symshape's loader (:func:`export.deploy.aoti_load_package`, the package behind its contract):
  refuses exactly the calls ``ep.module()`` refuses, with the same words, and gives the same
  results for the rest;
* torch's own loader (``torch._inductor.aoti_load_package``) on the same package: never refuses
  a call ``ep.module()`` runs, never differs from it, and where torch keeps every dim a symbol of
  its own (no shared or derived ``Dim``) it refuses exactly what ``ep.module()`` refuses, through
  the graph's asserts (the relations' asserts are what AOTI keeps of the contract);
* the contract reads back from the package without torch (:func:`shapes.contract_files.read_contract`).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

import export
from deploy_models import CASES, case, first, grid, outcome
from export import InputError, RefusedInputError
from export.deploy import aoti_compile_and_package, aoti_load_package
from shapes.contract_files import read_contract

SEPARATE_SYMBOLS = ("cat64", "groups AUTO", "product", "one branch")
"""The models whose every dynamic dim is a symbol of its own in torch's program: the graph's
asserts alone refuse all the contract refuses."""


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, torch.nn.Module, tuple[Any, ...], str]]:
    folder = tmp_path_factory.mktemp("aoti")
    out = {}
    for c in CASES:
        model, args, spec = case(c.name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = export.export(model, args, dynamic_shapes=spec)
        path = aoti_compile_and_package(ep, folder / f"{c.name.replace(' ', '_')}.pt2")
        out[c.name] = (ep, model, args, path)
    return out


def _agree(want: Any, got: Any) -> bool:
    a, b = first(want), first(got)
    return a.shape == b.shape and torch.allclose(a, b, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_symshapes_loader_refuses_what_the_program_refuses_in_its_words(c: Any, compiled: dict[str, Any]) -> None:
    ep, _, args, path = compiled[c.name]
    module, loaded = ep.module(), aoti_load_package(path)
    assert loaded.contract == ep.symshape.contract
    counts = {"ran": 0, "refused": 0}
    for call in grid(ep, args, c.sizes):
        runs, want = outcome(module, call)
        aoti_runs, got = outcome(loaded, call)
        assert aoti_runs == runs, (c.name, [t.shape for t in call], got)
        if runs:
            assert _agree(want, got), (c.name, [t.shape for t in call])
        else:
            assert isinstance(got, RefusedInputError) and str(got) == str(want), (str(got), str(want))
        counts["ran" if runs else "refused"] += 1
    assert counts["ran"] and counts["refused"], counts


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_torchs_loader_never_refuses_or_differs_where_the_program_runs(c: Any, compiled: dict[str, Any]) -> None:
    ep, _, args, path = compiled[c.name]
    module, bare = ep.module(), torch._inductor.aoti_load_package(path)
    for call in grid(ep, args, c.sizes):
        runs, want = outcome(module, call)
        bare_runs, got = outcome(bare, call)
        if runs:
            assert bare_runs and _agree(want, got), (c.name, [t.shape for t in call], got)
        elif c.name in SEPARATE_SYMBOLS:  # the graph's asserts are all it takes
            assert not bare_runs, (c.name, [t.shape for t in call])


def test_the_contract_reads_back_from_the_package_without_torch(compiled: dict[str, Any]) -> None:
    for ep, _, _, path in compiled.values():
        assert read_contract(path) == ep.symshape.contract
        assert read_contract(Path(path).read_bytes(), "package.pt2") == ep.symshape.contract


def test_a_program_torch_exported_has_no_contract_to_compile() -> None:
    model, args, spec = case("one branch")
    plain = torch.export.export(model, args, dynamic_shapes=spec)
    with pytest.raises(InputError, match="needs a program exported by symshape"):
        aoti_compile_and_package(plain)
