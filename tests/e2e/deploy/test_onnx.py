"""ONNX with the program's contract (issue 33, item 4): export.deploy.onnx_export + onnx_session.

Oracle, per model of tests/support/deploy_models.py, on its grid: every call ``ep.module()``
refuses, the checked onnxruntime session refuses with the same text; every call it runs,
onnxruntime runs with the same result. The bare onnxruntime session (torch.onnx keeps no
check) runs the ``one branch`` model at batch 1 through its batch-2 path: what the contract is
for. Tables: the dims of the model's inputs and first output in the user's names. The contract
reads back from the ``.onnx`` file with torch blocked. One zoo model: the Llama decoding step
with a KV cache (benchmarks/hf_zoo.py, ``llama_kv``, shared Dims).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.export import Dim

pytest.importorskip("onnx")
pytest.importorskip("onnxscript")
ort = pytest.importorskip("onnxruntime")

import numpy as np  # noqa: E402
import onnx  # noqa: E402

import export  # noqa: E402
from deploy_models import CASES, case, first, grid, outcome  # noqa: E402
from export.deploy.onnx import CheckedSession, onnx_export, onnx_session  # noqa: E402
from export.errors import ExportError, InputError, RefusedInputError  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]


def _export(model: torch.nn.Module, args: tuple[Any, ...], spec: Any, kwargs: Any = None) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return export.export(model, args, kwargs, dynamic_shapes=spec)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, torch.nn.Module, tuple[Any, ...], Path]]:
    folder = tmp_path_factory.mktemp("onnx")
    out = {}
    for c in CASES:
        model, args, spec = c.make()
        ep = _export(model, args, spec)
        out[c.name] = (ep, model, args, onnx_export(ep, folder / f"{c.name.replace(' ', '_')}.onnx"))
    return out


def _feeds(session: CheckedSession, call: tuple[torch.Tensor, ...]) -> dict[str, np.ndarray]:
    onnx_name = {c: o for o, c in session.onnx_contract.inputs}
    return {onnx_name[entry.name]: t.numpy() for entry, t in zip(session.contract.inputs, call)}


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_the_session_refuses_what_the_program_refuses_and_runs_the_rest_alike(c: Any, deployed: dict[str, Any]) -> None:
    ep, _, args, path = deployed[c.name]
    session = onnx_session(path)
    assert session.contract == ep.symshape.contract
    module = ep.module()
    refused = ran = 0
    for call in grid(ep, args, c.sizes):
        runs, want = outcome(module, call)
        feeds = _feeds(session, call)
        ort_runs, got = outcome(lambda: session.run(None, feeds), ())
        assert ort_runs == runs, (c.name, [t.shape for t in call], got if not ort_runs else want)
        if runs:
            np.testing.assert_allclose(got[0], first(want).detach().numpy(), atol=1e-5, err_msg=c.name)
            ran += 1
        else:
            assert isinstance(got, RefusedInputError) and isinstance(want, RefusedInputError), (repr(got), repr(want))
            assert str(got) == str(want)
            refused += 1
    assert ran > 0 and refused > 0, (ran, refused)


def test_bare_onnxruntime_runs_the_one_branch_model_at_batch_1_wrongly(deployed: dict[str, Any]) -> None:
    """torch.onnx drops the ``x.size(0) >= 2`` the trace relied on; onnxruntime runs batch 1
    through the ``x + 1`` path, where eager takes ``x * 2``. The checked session refuses it."""
    ep, model, _, path = deployed["one branch"]
    x = torch.randn(1, 4, generator=torch.Generator().manual_seed(0))
    session = onnx_session(path)
    bare, = session.session.run(None, {"x": x.numpy()})
    np.testing.assert_allclose(bare, (x + 1).numpy(), atol=1e-6)
    assert not np.allclose(bare, model(x).numpy())
    with pytest.raises(RefusedInputError, match=r"x\.size\(0\) must be >= 2 .*got x\.size\(0\) = 1"):
        session.run(None, {"x": x.numpy()})


DIMS = {  # case: (its inputs' dims, its first output's dims), as the .onnx file says them
    "cat64": ([["x_size0", 2], ["y_size0", 2]], [8, 8, 2]),
    "groups AUTO": ([["x_size0", "x_size1"]], ["x_size0", "x_size1 // 4"]),
    "product": ([["x_size0", "x_size1"], ["y_size0", "y_size1"]], ["x_size0 * x_size1"]),
    "kv step": ([["b", "s", 8], ["b", "p", 8], ["b", "m"]], ["b", "p + s", 8]),
    "prefix": ([["b", "n"], ["b", "k"]], ["b", "k"]),
    "tiny encoder": ([["batch", "4 * _seq", 16], ["batch", "4 * _seq"]], ["batch", "_seq", 16]),
    "one branch": ([["b", 4]], ["b", 4]),
    "doubled": ([["b", 4], ["2 * b", 4]], ["2 * b", 4]),
    "view64": ([["64 * _n"]], [8, 8, "_n"]),
}


def _dims(value: Any) -> list[int | str]:
    return [d.dim_param or d.dim_value for d in value.type.tensor_type.shape.dim]


@pytest.mark.parametrize("name", list(DIMS))
def test_the_models_dims_are_the_users_names(name: str, deployed: dict[str, Any]) -> None:
    _, _, _, path = deployed[name]
    model = onnx.load(str(path), load_external_data=False)
    inputs, output = DIMS[name]
    assert [_dims(v) for v in model.graph.input] == inputs
    assert _dims(model.graph.output[0]) == output
    onnx.checker.check_model(str(path))
    props = {p.key: p.value for p in model.metadata_props}
    assert json.loads(props["symshape.onnx_inputs"]) == [{"onnx": v.name, "input": v.name} for v in model.graph.input]


BLOCKED = textwrap.dedent("""
    import importlib.abc, json, sys

    class BlockTorch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "torch" or name.startswith("torch.") or name == "export" or name.startswith("export."):
                raise ImportError(f"blocked in this test (import of {name!r})")
            return None

    sys.meta_path.insert(0, BlockTorch())
    import numpy as np
    from shapes.contract_files import read_contract
    from shapes.contract_onnx import read_onnx
    from shapes.errors import RefusedInputError
    path = sys.argv[1]
    contract = read_contract(path)
    with open(path, "rb") as f:
        checked = read_onnx(f.read(), path)
    assert checked.contract == contract
    try:
        checked.check({"tokens": np.zeros((2, 6, 16), np.float32), "mask": np.zeros((2, 6), np.float32)})
    except RefusedInputError as e:
        refusal = str(e)
    leaked = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "export"))
    print(json.dumps({"contract": contract.to_dict(), "refusal": refusal, "leaked": leaked}))
""")


def test_the_contract_reads_back_without_torch(deployed: dict[str, Any]) -> None:
    ep, _, _, path = deployed["tiny encoder"]
    proc = subprocess.run([sys.executable, "-c", BLOCKED, str(path)], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["contract"] == ep.symshape.contract.to_dict() and not got["leaked"]
    with pytest.raises(RefusedInputError) as caught:
        ep.module()(torch.zeros(2, 6, 16), torch.zeros(2, 6))
    assert got["refusal"] == str(caught.value)


# -- errors ------------------------------------------------------------------------------------------

class _Eig(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.linalg.eigvals(x).real


def test_errors_say_what_to_do(deployed: dict[str, Any], tmp_path: Path) -> None:
    ep, model, args, _ = deployed["one branch"]
    plain = torch.export.export(model, args, dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(InputError, match="needs a program exported by symshape"):
        onnx_export(plain, tmp_path / "plain.onnx")
    with pytest.raises(InputError, match="passes f to torch.onnx.export itself"):
        onnx_export(ep, tmp_path / "f.onnx", f="elsewhere.onnx")
    torch.onnx.export(plain, f=tmp_path / "plain.onnx", dynamo=True, verbose=False)
    with pytest.raises(InputError, match=r"plain\.onnx: carries no symshape contract .*onnx_export"):
        onnx_session(tmp_path / "plain.onnx")
    with pytest.raises(ExportError) as caught:
        onnx_export(_export(_Eig(), (torch.randn(3, 4, 4),), {"x": {0: Dim("b")}}), tmp_path / "eig.onnx")
    text = str(caught.value)
    assert text.startswith("torch.onnx could not convert the program to ONNX:") and "aten.linalg_eig" in text, text
    assert "What to do" in text and "custom_translation_table" in text and len(text.splitlines()) <= 6, text
    assert caught.value.__cause__ is None and caught.value.__suppress_context__  # no torch traceback shown
    session = onnx_session(deployed["one branch"][3])
    with pytest.raises(InputError, match="no ONNX input named y"):
        session.run(None, {"x": np.zeros((2, 4), np.float32), "y": np.zeros(2)})
    with pytest.raises(RefusedInputError, match="x is missing"):
        session.run(None, {})


# -- a zoo model -------------------------------------------------------------------------------------

LIMIT = {"batch": (1, 2, 3), "seq": (1, 2, 7), "past": (1, 6)}


def test_a_llama_decoding_step_with_a_kv_cache(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from benchmarks.hf_zoo import MODELS, example_sizes, grid as zoo_grid, spec

    m = MODELS["llama_kv"]
    model = m.build()
    args, kwargs = m.inputs(example_sizes(m, "shared"))
    ep = _export(model, args, spec(m, "shared"), kwargs)
    session = onnx_session(onnx_export(ep, tmp_path / "llama_kv.onnx"))
    graph = onnx.load(str(tmp_path / "llama_kv.onnx"), load_external_data=False).graph
    assert {v.name: _dims(v) for v in graph.input} == {
        "input_ids": ["batch", "seq"], **{f"past_{kv}_{i}": ["batch", 2, "past", 16] for kv in ("keys", "values")
                                          for i in range(2)}}
    assert [_dims(v) for v in graph.output] == [["batch", "seq", 64]] + [["batch", 2, "past + seq", 16]] * 4
    module = ep.module()
    names = [o for o, _ in session.onnx_contract.inputs]
    for sizes in zoo_grid(m, LIMIT):
        _, call = m.inputs(sizes)
        flat = [call["input_ids"], *call["past_keys"], *call["past_values"]]
        want = module(**call)
        got = session.run(None, {n: t.numpy() for n, t in zip(names, flat)})
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w.detach().numpy(), atol=1e-4, err_msg=str(sizes))
    _, call = m.inputs({"batch": 2, "seq": 3, "past": 4})
    call["past_keys"][1] = call["past_keys"][1][:, :, :3]  # one layer's cache shorter than the others
    flat = [call["input_ids"], *call["past_keys"], *call["past_values"]]
    with pytest.raises(RefusedInputError) as want_refusal:
        module(**call)
    with pytest.raises(RefusedInputError) as got_refusal:
        session.run(None, {n: t.numpy() for n, t in zip(names, flat)})
    assert str(got_refusal.value) == str(want_refusal.value)
    assert "past_keys[1].size(2) must equal past_keys[0].size(2)" in str(got_refusal.value)
