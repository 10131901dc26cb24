"""One torch.export trace with every symbolic decision asked of the solver.

:mod:`.bridge` is the decider torch's ShapeEnv calls, :mod:`.questions` its record of which
question was asked where; :mod:`.convert` turns torch's sympy into
``shapes`` expressions, :mod:`.provenance` and :mod:`.sites` find the user's source line and
the torch site that asked, :mod:`.neutral` tells which questions are 0/1-neutral; the result
is a frozen :class:`.trace.Trace` (the spec, the solver with every fact, the sites).

Step 2: ``Spec -> Trace``.
"""
