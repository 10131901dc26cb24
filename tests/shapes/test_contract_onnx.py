"""Reading and checking a shape contract in an ONNX model, without torch (shapes.contract_onnx).

Models are built with ``onnx.helper`` (an Identity per input) carrying the metadata that
``export.deploy.onnx_export`` writes. Tables: what damaged or missing metadata says (always
naming the file); what the feeds of an int input may be. Oracle: on a grid of feeds, the
ONNX check refuses exactly what ``Contract.check_shapes`` refuses for :meth:`feed_shapes`, in
the same words; onnxruntime's ``custom_metadata_map`` reads back the same contract.
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sympy

from shapes.contract import Condition, Contract, ContractDim, ContractInput
from shapes.contract_files import METADATA_KEY, read_contract
from shapes.contract_onnx import INPUTS_KEY, OnnxContract, onnx_contract, read_onnx
from shapes.errors import ContractError, RefusedInputError
from shapes.expr import int_symbol

x0, x1, y0, n = (int_symbol(s) for s in ("x_size0", "x_size1", "ys_0_size0", "n_value"))
CONTRACT = Contract(
    params=("x", "ys", "n"),
    inputs=(ContractInput("x", ("x",), "tensor", ("x_size0", "x_size1", 3), "float32"),
            ContractInput("ys[0]", ("ys", 0), "tensor", ("ys_0_size0",), "float32"),
            ContractInput("n", ("n",), "int", ("n_value",)),
            ContractInput("k", ("k",), "int", (7,))),
    dims=(ContractDim("x_size0", "x.size(0)", "batch", 1, 64), ContractDim("x_size1", "x.size(1)", "4 * _s", 4, None),
          ContractDim("ys_0_size0", "ys[0].size(0)", "batch", 1, 64), ContractDim("n_value", "n", None, 0, None)),
    conditions=(Condition(sympy.Le(x0, 64), "x.size(0) must be <= 64", "range"),
                Condition(sympy.Eq(sympy.Mod(x1, 4), 0), "x.size(1) must be divisible by 4", "derived",
                          note="x.size(1) = 4 * _s", origin="m.py:3", code="x.view(b, -1, 4)"),
                Condition(sympy.Eq(y0, x0), "ys[0].size(0) must equal x.size(0)", "equal"),
                Condition(sympy.Le(n, x1), "n <= x.size(1)", "relation", origin="m.py:4", code="x[:, :n]")),
)
INPUTS = (("x", "x"), ("ys_0", "ys[0]"), ("n", "n"))
CHECKED = OnnxContract(CONTRACT, INPUTS)


def _model(metadata: dict[str, str]) -> bytes:
    onnx = pytest.importorskip("onnx")
    helper = onnx.helper
    values = [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["batch", "4 * _s", 3]),
              helper.make_tensor_value_info("ys_0", onnx.TensorProto.FLOAT, ["batch"]),
              helper.make_tensor_value_info("n", onnx.TensorProto.INT64, [])]
    outs = [helper.make_tensor_value_info(f"{v.name}_out", v.type.tensor_type.elem_type, None) for v in values]
    nodes = [helper.make_node("Identity", [v.name], [o.name]) for v, o in zip(values, outs)]
    model = helper.make_model(helper.make_graph(nodes, "m", values, outs), opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    helper.set_model_props(model, metadata)
    data: bytes = model.SerializeToString()
    return data


def _feeds(x: tuple[int, ...], y: tuple[int, ...], k: Any) -> dict[str, Any]:
    return {"x": SimpleNamespace(shape=x), "ys_0": SimpleNamespace(shape=y), "n": k}


def test_the_keys_are_the_files_modules() -> None:
    assert METADATA_KEY == "symshape.contract" and INPUTS_KEY == "symshape.onnx_inputs"


def test_a_model_carries_its_contract_and_inputs(tmp_path: Path) -> None:
    data = _model(CHECKED.metadata())
    assert read_onnx(data, "m.onnx") == CHECKED
    assert onnx_contract(data, "m.onnx") == CONTRACT
    (tmp_path / "m.onnx").write_bytes(data)
    (tmp_path / "model.bin").write_bytes(data)  # by its bytes, whatever its name
    assert read_contract(tmp_path / "m.onnx") == read_contract(tmp_path / "model.bin") == CONTRACT
    assert read_contract(data, "m.onnx") == CONTRACT
    assert OnnxContract.from_metadata(CHECKED.metadata(), "m.onnx") == CHECKED


def _without(key: str) -> dict[str, str]:
    return {k: v for k, v in CHECKED.metadata().items() if k != key}


DAMAGED = [  # (metadata, what the error says after the file's name)
    ({}, "carries no symshape contract (no 'symshape.contract' in its metadata_props: export it with "
         "export.deploy.onnx_export)"),
    ({"other": "1"}, "carries no symshape contract"),
    ({METADATA_KEY: "{not json"}, "symshape.contract: a contract is JSON"),
    ({METADATA_KEY: json.dumps({**CONTRACT.to_dict(), "version": 9})}, "symshape.contract: contract version 9 is not supported"),
    ({METADATA_KEY: json.dumps({**CONTRACT.to_dict(), "format": "x"})}, "symshape.contract: not a shape contract"),
    ({**CHECKED.metadata(), METADATA_KEY: json.dumps({**CONTRACT.to_dict(), "dims": 3})},
     "symshape.contract: contract.dims: expected list, got int"),
    (_without(INPUTS_KEY), "its contract says no ONNX input names ('symshape.onnx_inputs' is missing"),
    ({**CHECKED.metadata(), INPUTS_KEY: "[{"}, "symshape.onnx_inputs: not JSON"),
    ({**CHECKED.metadata(), INPUTS_KEY: json.dumps({"x": "x"})}, "symshape.onnx_inputs: expected a list of"),
    ({**CHECKED.metadata(), INPUTS_KEY: json.dumps([{"onnx": "x", "input": "z"}])},
     "symshape.onnx_inputs: no input named z in the contract"),
    ({**CHECKED.metadata(), INPUTS_KEY: json.dumps([{"onnx": "x", "input": "x"}, {"onnx": "x", "input": "n"}])},
     "symshape.onnx_inputs: an ONNX input is bound twice"),
]


@pytest.mark.parametrize(("metadata", "says"), DAMAGED, ids=[d[1][:40] for d in DAMAGED])
def test_damaged_or_missing_metadata_names_the_file(metadata: dict[str, str], says: str, tmp_path: Path) -> None:
    path = tmp_path / "broken.onnx"
    path.write_bytes(_model(metadata))
    with pytest.raises(ContractError) as caught:
        read_onnx(path.read_bytes(), str(path))
    assert str(caught.value).startswith(f"{path}: ") and says in str(caught.value), str(caught.value)
    if METADATA_KEY not in metadata or says.startswith("symshape.contract"):
        with pytest.raises(ContractError, match=f"^{path}: "):
            read_contract(path)


def test_a_file_that_is_no_onnx_model(tmp_path: Path) -> None:
    pytest.importorskip("onnx")
    path = tmp_path / "junk.onnx"
    path.write_bytes(b"\x0a\xff\xff\xff\xff\x0f garbage")
    with pytest.raises(ContractError, match=r"junk\.onnx: not an ONNX model"):
        read_contract(path)


def test_without_the_onnx_package_reading_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "onnx", None)  # `import onnx` raises ImportError
    with pytest.raises(ContractError, match=r"^m\.onnx: reading an ONNX model needs the onnx package \(pip install onnx\)"):
        onnx_contract(b"\x08\x08", "m.onnx")
    assert OnnxContract.from_metadata(CHECKED.metadata(), "m.onnx") == CHECKED  # no onnx needed


SIZES = ((1, 4), (2, 6), (65, 8), (3, 0))


def test_feeds_are_refused_exactly_as_their_shapes() -> None:
    """The oracle: on a grid of feeds, :meth:`OnnxContract.failures_of` says what
    ``Contract.check_shapes(feed_shapes(feeds))`` says, and admits what it admits."""
    admitted = refused = 0
    for (a, b), c, k in itertools.product(SIZES, (1, 2, 65), (0, 3, 9, -1)):
        feeds = _feeds((a, b, 3), (c,), k)
        shapes = {**CHECKED.feed_shapes(feeds), "k": 7}
        assert shapes == {"x": (a, b, 3), "ys[0]": (c,), "n": k, "k": 7}
        reasons = CHECKED.failures_of(feeds)
        try:
            CONTRACT.check_shapes(shapes)
        except RefusedInputError as e:
            refused += 1
            with pytest.raises(RefusedInputError) as caught:
                CHECKED.check(feeds)
            assert str(caught.value) == str(e) and reasons
        else:
            admitted += 1
            assert not reasons
            CHECKED.check(feeds)
    assert admitted and refused


WORDS = [  # feeds, the refusal's reasons
    (_feeds((2, 6, 3), (2,), 3), ["x.size(1) must be divisible by 4 (x.size(1) = 4 * _s; got x.size(1) = 6), "
                                  "needed at m.py:3: x.view(b, -1, 4)"]),
    (_feeds((2, 4, 3), (3,), 9), ["ys[0].size(0) must equal x.size(0) (got ys[0].size(0) = 3, x.size(0) = 2)",
                                  "n <= x.size(1) (got n = 9, x.size(1) = 4), needed at m.py:4: x[:, :n]"]),
    (_feeds((2, 4, 5), (2,), 0), ["x.size(2) must be 3 (static in the program; got x.size(2) = 5)"]),
    (_feeds((2, 4), (2,), 0), ["x must have 3 dims (got 2: (2, 4))"]),
    ({"x": SimpleNamespace(shape=(2, 4, 3)), "n": 1}, ["ys[0] is missing"]),
    (_feeds((2, 4, 3), (2,), True), ["n must be an int (got bool)"]),
    (_feeds((2, 4, 3), (2,), "2"), ["n must be an int (got str)"]),
]


@pytest.mark.parametrize(("feeds", "reasons"), WORDS, ids=[w[1][0][:40] for w in WORDS])
def test_a_refusal_reads_like_a_cause(feeds: dict[str, Any], reasons: list[str]) -> None:
    assert CHECKED.failures_of(feeds) == reasons


class _OrtValue:
    """onnxruntime's ``OrtValue``: ``shape()`` is a method."""

    def __init__(self, *shape: int) -> None:
        self._shape = list(shape)

    def shape(self) -> list[int]:
        return self._shape


def test_feeds_as_numpy_arrays_and_ort_values() -> None:
    np = pytest.importorskip("numpy")
    x, y = np.zeros((2, 8, 3), np.float32), np.zeros(2, np.float32)
    for k in (np.array(3), np.array([3]), np.int64(3), 3):
        assert CHECKED.feed_shapes({"x": x, "ys_0": y, "n": k}) == {"x": (2, 8, 3), "ys[0]": (2,), "n": 3}
        CHECKED.check({"x": x, "ys_0": y, "n": k})
    assert CHECKED.feed_shapes({"x": _OrtValue(2, 8, 3), "ys_0": _OrtValue(2)}) == {"x": (2, 8, 3), "ys[0]": (2,)}
    assert CHECKED.failures_of({"x": x, "ys_0": y, "n": np.array([1, 2])}) == ["n must be an int (got ndarray)"]
    with pytest.raises(ContractError, match=r"no ONNX input named z \(the model's inputs: x, ys_0, n\)"):
        CHECKED.check({"x": x, "ys_0": y, "n": 3, "z": x})


def test_onnxruntime_reads_the_contract_from_its_session(tmp_path: Path) -> None:
    ort = pytest.importorskip("onnxruntime")
    np = pytest.importorskip("numpy")
    path = tmp_path / "m.onnx"
    path.write_bytes(_model(CHECKED.metadata()))
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    checked = OnnxContract.from_metadata(session.get_modelmeta().custom_metadata_map, str(path))
    assert checked == CHECKED
    feeds = {"x": np.ones((2, 6, 3), np.float32), "ys_0": np.ones(2, np.float32), "n": np.array(2)}
    session.run(None, feeds)  # onnxruntime itself runs what the program refuses
    with pytest.raises(RefusedInputError, match=r"x\.size\(1\) must be divisible by 4"):
        checked.check(feeds)


def test_an_unknown_input_name_is_refused_when_built() -> None:
    with pytest.raises(ContractError, match="no input named q in the contract"):
        OnnxContract(CONTRACT, (("x", "q"),))
