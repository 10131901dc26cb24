"""Saved programs for the archive tests, and ways to damage them."""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable
from typing import Any

import torch
from torch.export import Dim

import export


class Pair(torch.nn.Module):
    """Two inputs sharing their batch dim, a reshape needing an even length."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        return self.lin(x.reshape(b, s // 2, 2, d).sum(2)) + y.unsqueeze(1)


def make_args(b: int, s: int) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(b, s, 4), torch.randn(b, 4)


def saved_program() -> bytes:
    """A symshape program (equality constraints, a report, a problem) as .pt2 bytes."""
    batch = Dim("batch")
    spec = {"x": {0: batch, 1: 2 * Dim("half")}, "y": {0: batch}}
    ep = export.export(Pair(), make_args(3, 8), dynamic_shapes=spec)
    buf = io.BytesIO()
    export.save(ep, buf)
    return buf.getvalue()


Edit = Callable[[bytes], bytes] | bytes | None


def rewrite(data: bytes, edits: dict[str, Edit]) -> bytes:
    """``data`` with members whose path ends with a key replaced (bytes), transformed
    (a function of the old bytes), or dropped (None); keys not found are added under the
    archive's root folder."""
    src = zipfile.ZipFile(io.BytesIO(data))
    root = src.namelist()[0].split("/", 1)[0]
    out = io.BytesIO()
    done = set()
    with zipfile.ZipFile(out, "w") as z:
        for info in src.infolist():
            payload = src.read(info.filename)
            key = next((k for k in edits if info.filename.endswith(k)), None)
            if key is not None:
                done.add(key)
                edit = edits[key]
                if edit is None:
                    continue
                payload = edit(payload) if callable(edit) else edit
            z.writestr(info.filename, payload)
        for key, edit in edits.items():
            if key not in done and isinstance(edit, bytes):
                z.writestr(f"{root}/{key}", edit)
    return out.getvalue()


def member(data: bytes, suffix: str) -> bytes:
    z = zipfile.ZipFile(io.BytesIO(data))
    return z.read(next(n for n in z.namelist() if n.endswith(suffix)))


class Canary:
    """Unpickling this writes ``path``: the proof that code ran."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return (open, (self.path, "w"))


def canary_pickle(path: str, *, torch_format: bool = True) -> bytes:
    buf = io.BytesIO()
    if torch_format:
        torch.save((Canary(path),), buf)
    else:
        import pickle

        pickle.dump(Canary(path), buf)
    return buf.getvalue()


def canary_expression(path: str) -> str:
    """An expr_str that, handed to sympy.sympify, creates ``path``."""
    chars = "+".join(f"chr({ord(c)})" for c in path)
    return f"Add(Integer(0), Integer(len(str(open({chars}, chr(119))))))"


def with_expr(data: bytes, expr: str) -> bytes:
    """``data`` with the first ``expr_str`` of models/model.json replaced."""

    def edit(payload: bytes) -> bytes:
        doc = json.loads(payload)
        stack: list[Any] = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if "expr_str" in node:
                    node["expr_str"] = expr
                    return json.dumps(doc).encode()
                stack.extend(node.values())
            elif isinstance(node, list):
                stack.extend(node)
        raise AssertionError("no expr_str in the model")

    return rewrite(data, {"models/model.json": edit})


def exists(path: str) -> bool:
    return os.path.exists(path)
