"""Ported PyTorch dynamic-shape export tests (see benchmarks/bench_ported.py): each module
holds a ``CASES`` list of ``Ported`` rows, each naming the PyTorch test it comes from."""
