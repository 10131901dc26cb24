"""Deciding a question, cheapest first: the interval / congruence / exact stages
(:mod:`.stages`) run by :mod:`.pipeline`, with the reparametrization (:mod:`.reparam`),
periodic facts (:mod:`.periodic`), witnesses (:mod:`.witness`), narrowing (:mod:`.narrowing`)
and the local Z3 query (:mod:`.local`) behind them.
"""
