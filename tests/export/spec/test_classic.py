"""``export.spec.classic``: ``dynamic_dim`` on example tensors, the terms users hold, and
classic constraints normalized by input name. Every refusal is an
:class:`export.errors.InputError` (operators: a :class:`ClassicOperatorError`) whose message
names the tensor ``t`` or the input, never symshape's internal token."""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

from export.errors import ClassicOperatorError, InputError
from export.spec.classic import TOKEN, ClassicTerm, dynamic_dim, from_constraints
from export.spec.inputs import Inputs
from shapes.classic import ClassicDim
from shapes.expr import int_symbol

X, Y = torch.randn(4, 8), torch.randn(4, 9)


def f(x: Any, y: Any) -> Any:
    return x


INPUTS = Inputs.bind(f, (X, Y), None)


def test_dynamic_dim_names_the_tensor_by_a_token() -> None:
    d = dynamic_dim(X, -1)  # a negative index counts from the end
    assert isinstance(d, ClassicTerm) and isinstance(d.record, ClassicDim)
    m = TOKEN.match(d.record.input.input_name)
    assert m is not None and int(m[1]) == id(X) and d.record.input.dim == 1


@pytest.mark.parametrize("make, ranged", [
    (lambda: dynamic_dim(X, 0) <= 8, (None, 8)),
    (lambda: dynamic_dim(X, 0) >= 3, (3, None)),
    (lambda: dynamic_dim(X, 0) < 8, (None, 7)),
    (lambda: dynamic_dim(X, 0) > 3, (4, None)),
])
def test_bounds(make: Callable[[], ClassicTerm], ranged: tuple[int | None, int | None]) -> None:
    c = make()
    assert (c.lo, c.hi) == ranged


@pytest.mark.parametrize("make, message", [
    (lambda: dynamic_dim(3, 0), "dynamic_dim expects an example input tensor, got int: 3"),
    (lambda: dynamic_dim(X, 2), "dynamic_dim(t, 2): the tensor has 2 dims (shape (4, 8)); use an index in [0, 1]"),
    (lambda: dynamic_dim(X, -3), "dynamic_dim(t, -3): the tensor has 2 dims (shape (4, 8)); use an index in [0, 1]"),
    (lambda: dynamic_dim(X, True), "dynamic_dim(t, True): the dim index must be an int"),
    (lambda: dynamic_dim(X, 1.0), "dynamic_dim(t, 1.0): the dim index must be an int"),
])
def test_dynamic_dim_refusals(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        make()
    assert str(info.value) == message and not isinstance(info.value, ClassicOperatorError)


D = dynamic_dim(X, 0)


@pytest.mark.parametrize("make, message", [
    (lambda: D >= 2.5, "dynamic_dim(t, 0) >= 2.5: classic bounds must be ints"),
    (lambda: D * -1, "-1 * dynamic_dim(t, 0): the coefficient of a classic dim must be positive"),
    (lambda: D == D, "dynamic_dim(t, 0) == dynamic_dim(t, 0): a dim related to itself"),
    (lambda: D + 1.5, "dynamic_dim(t, 0) + 1.5: a classic dim combines with ints (+, -, * by a positive int) and "
                      "other dynamic_dim(...)s only"),
    (lambda: bool(D <= 3), "'dynamic_dim(t, 0) <= 3' is a constraint, not a bool (chained comparisons like "
                           "2 <= d <= 8 are not supported; write two constraints)"),
    (lambda: 2 <= D <= 8, "'dynamic_dim(t, 0) >= 2' is a constraint, not a bool (chained comparisons like "
                          "2 <= d <= 8 are not supported; write two constraints)"),
])
def test_operator_refusals(make: Callable[[], Any], message: str) -> None:
    with pytest.raises(ClassicOperatorError) as info:
        make()
    assert str(info.value) == message
    assert isinstance(info.value, InputError) and isinstance(info.value, TypeError)


def test_a_product_of_two_dims_is_refused_in_the_users_words() -> None:
    with pytest.raises(ClassicOperatorError) as info:
        D * D
    assert str(info.value) == ("dynamic_dim(t, 0) * dynamic_dim(t, 0): a classic dim combines with ints "
                               "(+, -, * by a positive int) and other dynamic_dim(...)s only")
    assert isinstance(info.value, InputError) and isinstance(info.value, TypeError)


@pytest.mark.parametrize("make, shown", [
    (lambda: D * (2 * D + 1), "dynamic_dim(t, 0) * (2 * dynamic_dim(t, 0) + 1)"),
    (lambda: D + (D <= 3), "dynamic_dim(t, 0) + (dynamic_dim(t, 0) <= 3)"),
    (lambda: D * "k", "dynamic_dim(t, 0) * 'k'"),
])
def test_other_operands_are_shown_as_written(make: Callable[[], Any], shown: str) -> None:
    with pytest.raises(ClassicOperatorError) as info:
        make()
    assert str(info.value) == (f"{shown}: a classic dim combines with ints (+, -, * by a positive int) and "
                               "other dynamic_dim(...)s only")
    assert "ClassicDim(" not in str(info.value) and "InputDim(" not in str(info.value)


def test_terms_are_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(D)


def test_from_constraints_names_the_inputs() -> None:
    x0, x1 = int_symbol("x_0"), int_symbol("x_1")
    spec = from_constraints(INPUTS, [dynamic_dim(X, 0) <= 8, dynamic_dim(Y, 0) == dynamic_dim(X, 0),
                                     dynamic_dim(Y, 1) == 2 * dynamic_dim(X, 1) + 1])
    assert spec.api == "classic"
    # y.size(1) == 2 * x_1 + 1 is at most 2**63 - 2 too (torch's limit for a derived Dim's max)
    assert {(r.name, r.lo, r.hi) for r in spec.roots} == {("x_0", 2, 8), ("x_1", 2, (2**63 - 3) // 2)}
    assert {str(d.dim): d.expr for d in spec.decls} == {"x.size(0)": x0, "y.size(0)": x0, "y.size(1)": 2 * x1 + 1,
                                                       "x.size(1)": x1}
    assert [r.text for r in spec.roots] == ["dynamic_dim(x, 0) <= 8", "dynamic_dim(x, 1)"]


def test_a_bare_dim_is_the_classic_default_range() -> None:
    spec = from_constraints(INPUTS, [dynamic_dim(Y, 1)])
    assert [(r.name, r.lo, r.hi, r.text) for r in spec.roots] == [("y_1", 2, 2**63 - 2, "dynamic_dim(y, 1) >= 2")]


def test_a_tensor_passed_twice_ties_its_copy() -> None:
    def g(a: Any, b: Any) -> Any:
        return a

    _, _, inputs = Inputs.example(g, (X, X), None)
    spec = from_constraints(inputs, [dynamic_dim(X, 0) <= 8])
    assert {str(d.dim): str(d.expr) for d in spec.decls} == {"a.size(0)": "a_0", "b.size(0)": "a_0"}


@pytest.mark.parametrize("constraints, message", [
    ([True], "constraints[0] is a bool: compare dynamic_dim(...) with ints or dims (chained comparisons like "
             "2 <= d <= 8 are not supported: write two constraints)"),
    ([D <= 8, "x"], "constraints[1] is 'x', not a dynamic_dim(...) constraint"),
    ([dynamic_dim(torch.randn(3), 0)], "constraints[0] refers to a tensor that is not one of the example inputs; "
                                       "call dynamic_dim on the very tensors passed in args/kwargs"),
    ([D >= 9, D <= 3], "contradictory constraints for x.size(0): dynamic_dim(x, 0) >= 9, dynamic_dim(x, 0) <= 3 "
                       "leave no size"),
])
def test_from_constraints_refusals(constraints: list[Any], message: str) -> None:
    with pytest.raises(InputError) as info:
        from_constraints(INPUTS, constraints)
    assert str(info.value) == message


def test_an_expression_constraint_is_refused_without_the_token() -> None:
    with pytest.raises(InputError) as info:
        from_constraints(INPUTS, [2 * D + 1])
    assert "#tensor" not in str(info.value)
    # the input's name, as the other from_constraints messages spell it
    assert str(info.value) == ("constraints[0] is 2 * dynamic_dim(x, 0) + 1, an expression: compare it with "
                               "a dynamic_dim(...)")


def test_an_expression_of_a_foreign_tensor_is_refused_without_the_token() -> None:
    with pytest.raises(InputError) as info:
        from_constraints(INPUTS, [D <= 8, dynamic_dim(torch.randn(3), 0) + 1])
    assert str(info.value) == ("constraints[1] is dynamic_dim(t, 0) + 1, an expression: compare it with "
                               "a dynamic_dim(...)")
