"""``astjax.profiler``: device memory profiles and traces (issue 7; not built yet)."""
