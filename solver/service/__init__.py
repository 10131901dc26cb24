"""The solver as a service: problems and answers as JSON (:mod:`.problem`, :mod:`.codec`),
the line protocol (:mod:`.protocol`), its limits (:mod:`.limits`) and the worker (:mod:`.worker`).

One JSON round trip: :func:`to_json` (a solver's problem as text) and :func:`from_json` (text
or parsed data back into a solver); :func:`replay` answers a problem as :func:`answers_from_solver`
does; :class:`Session` and :func:`serve` are the JSON-lines server (``python -m solver serve``).
:class:`CheckCommand` is the ``check`` command (sizes against a program's shape contract,
:mod:`.check`), for ``python -m solver check`` and ``symshape check``.
"""

from solver.errors import LimitError, ProtocolError, TimeLimitError
from solver.service.check_command import CheckCommand
from solver.service.codec import from_json, to_json
from solver.service.limits import Limits
from solver.service.problem import FactSpec, GuardSpec, Problem, SymbolSpec
from solver.service.protocol import Session, answers_from_solver, replay, serve

__all__ = [
    "CheckCommand",
    "FactSpec",
    "GuardSpec",
    "LimitError",
    "Limits",
    "Problem",
    "ProtocolError",
    "Session",
    "SymbolSpec",
    "TimeLimitError",
    "answers_from_solver",
    "from_json",
    "replay",
    "serve",
    "to_json",
]
