"""The solver as a service: problems and answers as JSON (:mod:`.problem`, :mod:`.codec`),
the line protocol (:mod:`.protocol`), its limits (:mod:`.limits`) and the worker (:mod:`.worker`).
"""
