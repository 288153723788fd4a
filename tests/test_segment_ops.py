"""astjax.ops (jax.ops): segment_sum / prod / max / min against NumPy loops, eagerly, under
jit, vmap and grad."""
import numpy as np
import pytest

import astjax
from astjax import ops

DATA = np.float32([[1, -2], [2, 0.5], [3, 3], [4, -1], [5, 2]])
IDS = np.int32([0, -1, 2, 2, 7])  # -1 and 7 are outside [0, 4): dropped


def _reference(kind, data, ids, n):
    identity = {"sum": 0, "prod": 1, "max": -np.inf, "min": np.inf}[kind]
    reduce = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    out = np.full((n,) + data.shape[1:], identity, data.dtype)
    for row, s in zip(data, ids):
        if 0 <= s < n:
            out[s] = reduce(out[s], row)
    return out


def _all_four(data, ids):
    return (ops.segment_sum(data, ids, 4), ops.segment_prod(data, ids, num_segments=4),
            ops.segment_max(data, ids, 4), ops.segment_min(data, ids, 4),
            ops.segment_sum(data, ids))


@pytest.mark.parametrize("run", ["eager", "jit"])
def test_segment_reductions_against_numpy(run):
    f = _all_four if run == "eager" else astjax.jit(_all_four)
    got = f(DATA, IDS)
    for g, kind in zip(got, ["sum", "prod", "max", "min"]):
        np.testing.assert_array_equal(g, _reference(kind, DATA, IDS, 4))
    # num_segments=None: max(ids) + 1 segments (at run time under jit)
    np.testing.assert_array_equal(got[4], _reference("sum", DATA, IDS, 8))


def test_segment_identities_of_integers_and_vmap():
    ints = np.int32([1, 2, 3])
    got = ops.segment_max(ints, np.int32([0, 0, 2]), 3)
    np.testing.assert_array_equal(got, [2, np.iinfo(np.int32).min, 3])
    assert got.dtype == np.int32
    x = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    got = astjax.vmap(lambda r: ops.segment_sum(r, np.int32([0, 0, 1, 1]), 2))(x)
    np.testing.assert_array_equal(got, [[1, 5], [9, 13]])


def test_segment_max_gradient_splits_ties_as_jax():
    # JAX 0.10.2: jax.grad(lambda d: segment_max(d, [0, 0, 1, 1, 1], 2).sum()) at
    # [1, 2, 5, 5, 3] is [0, 1, 0.5, 0.5, 0]
    g = astjax.grad(lambda d: ops.segment_max(d, np.int32([0, 0, 1, 1, 1]), 2).sum())(
        np.float32([1, 2, 5, 5, 3]))
    np.testing.assert_array_equal(g, [0, 1, 0.5, 0.5, 0])
