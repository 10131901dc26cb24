"""The solver's building blocks, each independent of the engine's state: integer intervals
(:mod:`.interval`), congruences (:mod:`.congruence`), the union-find of equality classes
(:mod:`.union_find`), bound propagation (:mod:`.propagate`), memo tables (:mod:`.memo`), Z3
(:mod:`.smt`), enumeration (:mod:`.enumeration`), bounds of expressions (:mod:`.bounds`) and
the normal form of questions (:mod:`.normal_form`).
"""
