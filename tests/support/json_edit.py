"""Editing decoded JSON in place by key path: how the tests that damage saved documents
(archives, protocol problems) build each damaged variant. Import it after putting this
folder on ``sys.path`` (``Path(__file__).resolve().parents[1] / "support"`` from a test folder)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["DELETE", "set_at"]

DELETE = object()
"""As the value for :func:`set_at`: remove the entry at the path instead of setting it."""


def set_at(doc: Any, path: Sequence[Any], value: Any) -> None:
    """Set ``doc[path[0]]...[path[-1]]`` to ``value`` (remove that entry if ``value`` is
    :data:`DELETE`); every key but the last must already lead somewhere.

    >>> doc = {"a": [1, {"b": 2}]}
    >>> set_at(doc, ("a", 1, "b"), 3)
    >>> set_at(doc, ["a", 0], DELETE)
    >>> doc
    {'a': [{'b': 3}]}
    """
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value
