"""Routing under threads, nesting and exceptions (issue 11, item 1).

After any sequence of symshape exports, the four patched torch globals are torch's own
objects again (identity), and a plain ``torch.export.export`` behaves as vanilla.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
import torch
from torch.export import Dim
from torch.fx.experimental import symbolic_shapes

import export
from export import _torch_compat as tc

SITES = [importlib.import_module(name) for name in tc.SHAPE_ENV_SITES]


def torch_globals() -> list[Any]:
    return [m.ShapeEnv for m in SITES]


def assert_vanilla() -> None:
    """Every patched global is torch's own ShapeEnv class (the identical object)."""
    assert all(g is symbolic_shapes.ShapeEnv for g in torch_globals()), torch_globals()


@pytest.fixture(autouse=True)
def vanilla_before_and_after() -> Iterator[None]:
    assert_vanilla()
    yield
    assert_vanilla()


class A(tc.RoutingShapeEnv):
    pass


class B(tc.RoutingShapeEnv):
    pass


# -- one thread: every order of enter/exit -------------------------------------------------

Step = tuple[str, int]  # ("enter" | "exit", which)

SCHEDULES: list[list[Step]] = [
    [("enter", 0), ("exit", 0), ("enter", 1), ("exit", 1)],  # sequential
    [("enter", 0), ("enter", 1), ("exit", 1), ("exit", 0)],  # nested
    [("enter", 0), ("enter", 1), ("exit", 0), ("exit", 1)],  # enter1-enter2-exit1-exit2
]


def expected_top(open_: list[int]) -> Any:
    return [A, B][open_[-1]] if open_ else symbolic_shapes.ShapeEnv


@pytest.mark.parametrize("schedule", SCHEDULES, ids=["sequential", "nested", "crossed"])
@pytest.mark.parametrize("fail", [False, True], ids=["clean", "exception"])
def test_one_thread_schedules(schedule: list[Step], fail: bool) -> None:
    managers: list[AbstractContextManager[None]] = [tc.install_shape_env_class(A), tc.install_shape_env_class(B)]
    open_: list[int] = []
    for action, which in schedule:
        if action == "enter":
            managers[which].__enter__()
            open_.append(which)
        else:
            err = RuntimeError("boom") if fail else None
            # an exception leaving the block is thrown into it; the block lets it propagate
            assert not managers[which].__exit__(type(err) if err else None, err, None)
            open_.remove(which)
        assert all(g is expected_top(open_) for g in torch_globals()), (schedule, open_)


def test_route_restores_after_exception_and_nesting() -> None:
    with pytest.raises(ValueError, match="inner"), tc.route_shape_env(tc.BaseDecider()):
        with tc.route_shape_env(tc.BaseDecider()):
            raise ValueError("inner")
    with pytest.raises(KeyboardInterrupt), tc.route_shape_env(tc.BaseDecider()):
        raise KeyboardInterrupt


# -- two threads: the lock serializes, the other thread's plain export stays vanilla -------


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(fn())
        except BaseException as e:  # noqa: BLE001 - reported to the test thread
            box.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t, box


@pytest.mark.parametrize("first_fails", [False, True])
def test_second_thread_waits_for_the_first(first_fails: bool) -> None:
    inside, release = threading.Event(), threading.Event()
    order: list[str] = []

    def first() -> None:
        with tc.install_shape_env_class(A):
            order.append("enter1")
            inside.set()
            release.wait(10)
            order.append("exit1")
            if first_fails:
                raise RuntimeError("first failed")

    def second() -> None:
        with tc.install_shape_env_class(B):
            order.append("enter2")
            assert all(g is B for g in torch_globals())
        order.append("exit2")

    t1, box1 = in_thread(first)
    assert inside.wait(10)
    t2, box2 = in_thread(second)
    time.sleep(0.2)
    assert order == ["enter1"], "the second install must wait for the first to end"
    assert all(g is A for g in torch_globals())
    release.set()
    t1.join(10)
    t2.join(10)
    assert order == ["enter1", "exit1", "enter2", "exit2"]
    assert box2 == [None]
    assert (isinstance(box1[0], RuntimeError)) == first_fails


def test_other_threads_env_gets_no_decider() -> None:
    seen: list[Any] = []
    with tc.route_shape_env(tc.BaseDecider()) as envs:
        t, box = in_thread(lambda: SITES[0].ShapeEnv())
        t.join(10)
        here = SITES[0].ShapeEnv()
        seen = list(envs)
    assert box and box[0].decider is None
    assert here.decider is not None and seen == [here]


# -- real exports ---------------------------------------------------------------------------


class Mlp(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = torch.nn.Linear(8, 16)
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))


class Pool(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, d = x.shape
        return x.reshape(b, s // 2, 2, d).mean(dim=2) * 2


MODELS: list[tuple[torch.nn.Module, Callable[[int], tuple[torch.Tensor, ...]], dict[str, Any], list[int]]] = [
    (Mlp(), lambda n: (torch.randn(n, 8),), {"x": {0: Dim("batch")}}, [3, 17]),
    (Pool(), lambda n: (torch.randn(2, 2 * n, 8),), {"x": {1: 2 * Dim("half")}}, [3, 11]),
]


def check_program(ep: Any, model: torch.nn.Module, make: Callable[[int], tuple[torch.Tensor, ...]],
                  sizes: list[int]) -> None:
    for n in sizes:
        args = make(n)
        torch.testing.assert_close(ep.module()(*args), model(*args))


def test_two_models_from_two_threads() -> None:
    start = threading.Barrier(2)

    def job(i: int) -> Any:
        model, make, spec, _ = MODELS[i]
        start.wait(10)
        return export.export(model, make(5), dynamic_shapes=spec)

    runs = [in_thread(lambda i=i: job(i)) for i in range(2)]  # type: ignore[misc]
    for t, _ in runs:
        t.join(300)
    for (model, make, _, sizes), (_, box) in zip(MODELS, runs):
        assert len(box) == 1 and not isinstance(box[0], BaseException), box
        check_program(box[0], model, make, sizes)
    assert_vanilla()
    plain_export_is_vanilla()


def plain_export_is_vanilla() -> None:
    ep = torch.export.export(Mlp(), (torch.randn(5, 8),), dynamic_shapes={"x": {0: Dim("batch")}})
    env = tc.shape_env_of(ep)
    assert type(env) is symbolic_shapes.ShapeEnv


class Nested(torch.nn.Module):
    """A model whose forward runs a symshape export of another model."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        inner = export.export(Mlp(), (torch.randn(3, 8),), dynamic_shapes={"x": {0: Dim("b")}})
        return x + inner.module()(torch.ones(3, 8)).sum()


def test_export_nested_in_forward_restores_globals() -> None:
    try:
        export.export(Nested(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("n")}})
    except Exception:  # noqa: BLE001 - torch may refuse the nested trace; the globals must not care
        pass
    assert_vanilla()
    plain_export_is_vanilla()


def test_failing_export_restores_globals() -> None:
    class Bad(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            raise ZeroDivisionError("model bug")

    with pytest.raises(export.ModelError, match="ZeroDivisionError: model bug") as caught:  # (the model's own error)
        export.export(Bad(), (torch.randn(4, 8),), dynamic_shapes={"x": {0: Dim("n")}})
    assert isinstance(caught.value.__cause__, ZeroDivisionError)
    assert_vanilla()
    plain_export_is_vanilla()
