"""Congruences ``x = r (mod m)``: combination (CRT) and linear congruence solving.

A congruence is a pair ``(m, r)`` with ``m >= 1`` and ``0 <= r < m``; ``(1, 0)`` says nothing.

>>> combine((4, 1), (6, 3))
(12, 9)
>>> combine((4, 1), (6, 2)) is None
True
>>> solve_linear(2, 0, (8, 4))    # 2*y + 0 = 4 (mod 8)  ->  y = 2 (mod 4)
(4, 2)
>>> align_up(5, (4, 1)), align_down(5, (4, 1))
(5, 5)
"""

from __future__ import annotations

import math

__all__ = ["Congruence", "TRIVIAL", "combine", "solve_linear", "align_up", "align_down", "residue_of"]

Congruence = tuple[int, int]
TRIVIAL: Congruence = (1, 0)


def combine(a: Congruence, b: Congruence) -> Congruence | None:
    """The intersection of two congruences, or None when they exclude each other."""
    (m1, r1), (m2, r2) = a, b
    g = math.gcd(m1, m2)
    if (r2 - r1) % g:
        return None
    lcm = m1 // g * m2
    if m1 == 1:
        return (m2, r2 % m2)
    # r1 + m1 * t = r2 (mod m2)  ->  t = (r2 - r1)/g * inv(m1/g) (mod m2/g)
    m2g = m2 // g
    t = ((r2 - r1) // g * pow(m1 // g, -1, m2g)) % m2g if m2g > 1 else 0
    return (lcm, (r1 + m1 * t) % lcm)


def solve_linear(a: int, b: int, c: Congruence) -> Congruence | None:
    """Congruence on ``y`` equivalent to ``a*y + b = r (mod m)``; None if no y solves it."""
    m, r = c
    if m == 1:
        return TRIVIAL
    a %= m
    rhs = (r - b) % m
    g = math.gcd(a, m)
    if rhs % g:
        return None
    mg = m // g
    if mg == 1:
        return TRIVIAL
    return (mg, (rhs // g * pow(a // g, -1, mg)) % mg)


def align_up(v: int, c: Congruence) -> int:
    """The least value ``>= v`` in the congruence class."""
    m, r = c
    return v + (r - v) % m


def align_down(v: int, c: Congruence) -> int:
    """The greatest value ``<= v`` in the congruence class."""
    m, r = c
    return v - (v - r) % m


def residue_of(coeffs: list[tuple[int, Congruence]], const: int, modulus: int) -> tuple[int, int]:
    """For ``sum(a_i * y_i) + const`` with ``y_i`` in congruence ``c_i``: ``(g, value mod g)``.

    ``g`` divides ``modulus`` and is the largest modulus under which the sum is determined.

    >>> residue_of([(2, (4, 1))], 1, 8)    # 2*y + 1 with y = 1 (mod 4): 3 (mod 8)
    (8, 3)
    """
    g = modulus
    value = const
    for a, (m, r) in coeffs:
        g = math.gcd(g, a * m)
        value += a * r
    g = abs(g) if g else 0
    if g == 0:
        return 0, value
    return g, value % g
