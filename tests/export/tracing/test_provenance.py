"""``export.tracing.provenance``: the user's line a decision came from.

Fast: the frames walked are the test's own and synthetic ones (``trace_builder.call_from``),
whose files are named under torch's folder or a user folder, with their text in ``linecache``.
"""

from __future__ import annotations

import inspect
import os
import sys
import sysconfig

import pytest
import torch

import export.tracing.provenance as provenance
import shapes
import solver
from export.tracing.provenance import UserFrame, is_symshape_file, is_user_file, user_frame
from trace_builder import USER_ROOT, call_from, torch_site, user_site

TORCH_FILE = torch.__file__
STDLIB_FILE = os.path.join(sysconfig.get_paths()["stdlib"], "inspect.py")


@pytest.mark.parametrize("code, expected", [
    ("n = y.sum().item()", "n"),
    ("  total_len = x.shape[0]", "total_len"),
    ("if y.item() == 1:", "u0"),  # no assignment
    ("a == b", "u0"),  # a comparison, not an assignment
    ("x[0] = 3", "u0"),  # not a plain name
    ("_k2 = 1", "_k2"),
])
def test_assigned(code: str, expected: str) -> None:
    assert UserFrame("m.py", 5, "forward", code).assigned("u0") == expected


def test_origin_is_relative_under_the_working_directory(tmp_path: pytest.TempPathFactory,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    inside = os.path.join(str(tmp_path), "pkg", "model.py")
    assert UserFrame(inside, 14, "forward", "").origin == os.path.join("pkg", "model.py") + ":14"
    outside = os.path.join(os.path.dirname(str(tmp_path)), "elsewhere", "net.py")
    assert UserFrame(outside, 3, "f", "").origin == "net.py:3"  # not under it: the base name


@pytest.mark.parametrize("filename, user, own", [
    (TORCH_FILE, False, False),
    (STDLIB_FILE, False, False),
    (provenance.__file__, False, True),
    (shapes.__file__, False, True),
    (os.path.join(os.path.dirname(solver.__file__), "anything.py"), False, True),
    ("<string>", False, False),
    ("<frozen importlib._bootstrap>", False, False),
    (os.path.join(USER_ROOT, "model.py"), True, False),
    (__file__, True, False),  # the tests are the user's code
])
def test_whose_file(filename: str, user: bool, own: bool) -> None:
    assert (is_user_file(filename), is_symshape_file(filename)) == (user, own)


def test_user_frame_of_the_caller_is_this_test() -> None:
    here = user_frame()
    line = inspect.currentframe().f_lineno - 1  # type: ignore[union-attr]
    assert here is not None
    assert (here.filename, here.lineno, here.function, here.code) == (
        __file__, line, "test_user_frame_of_the_caller_is_this_test", "here = user_frame()")


def test_user_frame_skips_torch_frames_to_the_users_line() -> None:
    user = user_site("y = self.proj(x)", line=21, function="forward", path="net.py")
    torch_frame = torch_site("torch/nn/modules/linear.py", "forward", "return F.linear(input, self.weight)", 125)
    found = call_from([user, torch_frame], user_frame)
    assert found is not None
    assert (found.lineno, found.function, found.code) == (21, "forward", "y = self.proj(x)")
    assert found.filename == user.filename and found.origin == "net.py:21"


def test_user_frame_of_an_explicit_frame() -> None:
    frame = call_from([user_site("return x * 2", line=4, function="helper")], sys._getframe)
    found = user_frame(frame)
    assert found is not None and (found.lineno, found.function, found.code) == (4, "helper", "return x * 2")


def test_a_torch_frame_is_walked_past_to_its_caller() -> None:
    frame = call_from([torch_site("torch/_refs/__init__.py", "f", "return a", 10)], sys._getframe)
    assert not is_user_file(frame.f_code.co_filename)
    found = user_frame(frame)  # the torch frame's caller: trace_builder's call_from (the user's, to symshape)
    assert found is not None and (found.function, os.path.basename(found.filename)) == ("call_from", "trace_builder.py")


def test_user_frame_is_frozen() -> None:
    f = UserFrame("m.py", 1, "f", "x = 1")
    with pytest.raises(AttributeError):
        f.lineno = 2  # type: ignore[misc]
