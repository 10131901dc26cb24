"""The ``symshape`` command line: ``symshape export MODEL.py:FACTORY ...``, ``symshape replay FILE``
and ``symshape check FILE --shape x=2,8`` (the torch-free check of :mod:`solver.service.check`).

``export`` loads ``MODEL.py`` (the user's own code: it is executed), calls ``FACTORY()`` for
``(model, args)`` or ``(model, args, kwargs)``, exports with the dims declared by
``--dynamic`` (torch ``Dim`` API) or ``--constraint`` (classic ``dynamic_dim`` API) and
reports what the solver concluded. See ``docs/cli.md``.

Modules: :mod:`~export.cli.main` (entry point, exit statuses), :mod:`~export.cli.args`
(flags -> spec), :mod:`~export.cli.loading` (the model file), :mod:`~export.program.analysis`
(the solver's conclusions), :mod:`~export.cli.report`, :mod:`~export.cli.graph` (DOT),
:mod:`~export.cli.replay`, :mod:`~export.cli.check`.
"""

from export.cli.args import DynamicArg, UsageError, build_parser, parse_dynamic, parse_path
from export.cli.main import main

__all__ = ["main", "build_parser", "parse_dynamic", "parse_path", "UsageError", "DynamicArg"]
