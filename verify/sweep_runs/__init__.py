"""Sweeps as runs on disk (``verify/``'s third layer, above :mod:`~ropeproof.verify.measure`): the sweep
file formats (JSON, JSON Lines, text tables), shards of a long sweep and of a certified sweep, their
merge with every row verified by digest, and the shard runner (local processes or a Dask cluster). The
kernels below compute rows and write nothing; the commands write through this package."""
