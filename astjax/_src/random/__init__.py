"""Internals of ``astjax.random``: Threefry-2x32 (threefry.py), the samplers
(samplers.py), XLA's float algorithms (special.py), argument checks (checks.py)."""
