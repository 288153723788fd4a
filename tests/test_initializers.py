"""astjax.nn.initializers against JAX 0.10.2: the same key gives JAX's values bit for bit
(float32; recorded as literals), eagerly, under jit and vmap over keys. Also
astjax.flatten_util.ravel_pytree, which flattens such parameters."""
import numpy as np
import pytest

import astjax
import astjax.nn.initializers
import astjax.numpy as jnp
from astjax import random
from astjax.flatten_util import ravel_pytree
from astjax.nn import initializers as init

KEY = random.PRNGKey(42)

# name -> (initializer, shape)
CASES = {
    "uniform": (init.uniform(10.0), (2, 3)),
    "normal": (init.normal(3.0), (2, 3)),
    "truncated_normal": (init.truncated_normal(2.0, lower=-1.0, upper=1.5), (2, 3)),
    "glorot_uniform": (init.glorot_uniform(), (2, 3)),
    "glorot_normal": (init.glorot_normal(), (2, 3)),
    "lecun_uniform": (init.lecun_uniform(), (3, 4)),
    "lecun_normal": (init.lecun_normal(), (3, 4)),
    "he_uniform": (init.he_uniform(), (3, 2, 4)),
    "he_normal": (init.he_normal(), (3, 2, 4)),
    "vs_geo_normal": (init.variance_scaling(0.5, "fan_geo_avg", "normal", in_axis=(0, 1),
                                            out_axis=-1, batch_axis=2), (2, 3, 2, 5)),
    "vs_out_uniform": (init.variance_scaling(1.5, "fan_out", "uniform", in_axis=0,
                                             out_axis=1), (4, 3, 2)),
    "orthogonal": (init.orthogonal(), (3, 5)),
    "orthogonal_tall": (init.orthogonal(2.0, column_axis=0), (4, 2, 3)),
    "delta_orthogonal": (init.delta_orthogonal(), (3, 2, 3)),
}

# JAX 0.10.2: jax.nn.initializers' same initializer at jax.random.PRNGKey(42), raveled
JAX_VALUES = {
    "uniform":
        [4.88709545, 6.79797173, 6.16271496, 5.61016083, 4.50644588, 5.85865879],
    "normal":
        [-0.0849138498, 1.40139556, 0.887108922, 0.460637748, -0.372098446, 0.650769472],
    "truncated_normal":
        [0.186659366, 0.964488208, 0.695471585, 0.471482575, 0.0385865979, 0.571318209],
    "glorot_uniform":
        [-0.0247360952, 0.393915892, 0.254738092, 0.133679539, -0.108132243, 0.188122675],
    "glorot_normal":
        [-0.0194250047, 0.319512159, 0.202671111, 0.105340064, -0.0851031169, 0.148767576],
    "lecun_uniform":
        [-0.022580862, 0.359594345, 0.232542992, 0.122032166, -0.0987107754, 0.17173171,
         -0.850381136, 0.550266743, 0.397918463, 0.637267351, -0.299389601, 0.745640039],
    "lecun_normal":
        [-0.0177325215, 0.291673362, 0.185012564, 0.0961618796, -0.077688165, 0.135805592,
         -0.863499939, 0.469125122, 0.325282007, 0.562162876, -0.240343839, 0.696979284],
    "he_uniform":
        [-0.022580862, 0.359594345, 0.232542992, 0.122032166, -0.0987107754, 0.17173171,
         -0.850381136, 0.550266743, 0.397918463, 0.637267351, -0.299389601, 0.745640039,
         0.851762772, 0.720261335, -0.0448918343, 0.636963606, 0.422708988, 0.173394442,
         -0.852525234, 0.555244446, -0.190868855, -0.761753559, -0.947488785, 0.278357506],
    "he_normal":
        [-0.0177325215, 0.291673362, 0.185012564, 0.0961618796, -0.077688165, 0.135805592,
         -0.863499939, 0.469125122, 0.325282007, 0.562162876, -0.240343839, 0.696979284,
         0.866084158, 0.662901402, -0.0352657735, 0.561818779, 0.34747991, 0.137139678,
         -0.8675161, 0.47418499, -0.151195735, -0.719628036, -1.09379447, 0.222768798],
    "vs_geo_normal":
        [-0.00855188631, 0.141138062, 0.0893429592, 0.0463919826, -0.0374749675, 0.0655406192,
         -0.435343623, 0.228373647, 0.157537416, 0.274996638, -0.116170853, 0.344383389,
         0.436826289, 0.326582462, -0.0170082916, 0.274822623, 0.168395191, 0.0661853999,
         -0.437648833, 0.230889723, -0.0729804039, -0.356335253, -0.585820019, 0.107640907,
         -0.0728513002, 0.367135614, -0.421548933, -0.161573738, 0.0817812458, 0.465329319,
         0.209537998, -0.0313850679, -0.151765794, 0.204602554, 0.0334919654, -0.105068162,
         0.13744323, 0.0688384995, -0.168304265, -0.266790777, -0.0645065531, 0.0930617675,
         -0.0565658957, 0.0282907728, 0.11296355, -0.319423556, 0.134956062, 0.365826577,
         0.131092668, -0.212634847, 0.0532949083, -0.060035836, -0.0658981502, 0.388322741,
         0.113407776, -0.0538037717, -0.0724498406, -0.123820536, 0.110920049, 0.358908117],
    "vs_out_uniform":
        [-0.0195556004, 0.311417818, 0.201388136, 0.105682954, -0.0854860395, 0.14872402,
         -0.736451626, 0.476544976, 0.344607502, 0.551889718, -0.259278983, 0.645743191,
         0.737648189, 0.623764575, -0.0388774686, 0.551626682, 0.366076708, 0.150163993,
         -0.738308489, 0.480855793, -0.16529727, -0.65969795, -0.820549369, 0.241064668],
    "orthogonal":
        [-0.0126339197, 0.0685362443, -0.643145978, 0.40626061, 0.64533633, 0.321223199,
         -0.0871183574, 0.537223339, -0.275496304, 0.724374712, 0.227559939, 0.16116178,
         0.450132251, 0.842998564, -0.0947519243],
    "orthogonal_tall":
        [-0.034153223, -0.149661869, 0.629149139, 1.74453068, 0.67251122, -0.2914581,
         0.778472066, 0.515071571, 0.718314111, -0.291655272, -0.425195754, -1.53194416,
         -0.207554221, -1.47456563, -0.650441527, 0.312113762, -0.855435908, -0.728228509,
         0.0396856964, -0.506100357, 1.46270323, -0.0613876507, -0.966237366, 0.815722108],
    "delta_orthogonal":
        [0, 0, 0, 0, 0, 0, -0.0879273415, 0.918591321, -0.385303766, 0.872263372, 0.257802069,
         0.415565729, 0, 0, 0, 0, 0, 0],
}

# the orthogonal ones go through a QR (LAPACK's rounding), the others are exact
EXACT = [n for n in CASES if "orthogonal" not in n]


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_key_same_values_as_jax(name):
    initializer, shape = CASES[name]
    expected = np.array(JAX_VALUES[name], np.float32).reshape(shape)
    got = initializer(KEY, shape)
    assert got.dtype == np.float32 and got.shape == shape
    compiled = astjax.jit(lambda k: initializer(k, shape))(KEY)
    if name in EXACT:
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(compiled, expected)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(compiled, expected, rtol=1e-5, atol=1e-6)


def test_vmap_over_keys_and_orthogonality():
    keys = random.split(KEY, 3)
    for name in ("he_uniform", "glorot_normal", "orthogonal_tall", "delta_orthogonal"):
        initializer, shape = CASES[name]
        batched = astjax.vmap(lambda k: initializer(k, shape))(keys)
        for i in range(3):
            np.testing.assert_allclose(batched[i], initializer(keys[i], shape), rtol=1e-5,
                                       atol=1e-6)
    q = np.asarray(init.orthogonal(3.0)(KEY, (6, 4)), np.float64)
    np.testing.assert_allclose(q.T @ q, 9 * np.eye(4), atol=1e-5)
    w = np.asarray(init.orthogonal(column_axis=0)(KEY, (3, 2, 5)), np.float64).reshape(3, 10)
    np.testing.assert_allclose(w @ w.T, np.eye(3), atol=1e-5)


def test_constants_dtypes_and_errors(x64):
    assert init.zeros(KEY, (2, 3)).dtype == np.float64  # JAX's default float
    np.testing.assert_array_equal(init.ones(KEY, (2,), np.float32), np.ones(2, np.float32))
    np.testing.assert_array_equal(astjax.jit(lambda k: init.constant(-7.0)(k, (2, 3)))(KEY),
                                  np.full((2, 3), -7.0))
    assert init.normal(dtype=np.float32)(KEY, (3,)).dtype == np.float32
    assert init.he_normal()(KEY, (4, 3)).dtype == np.float64
    # a factory called in compiled code, and the dtype given to the initializer
    made_inside = astjax.jit(lambda k: init.he_normal()(k, (4, 3), np.float32))(KEY)
    assert made_inside.dtype == np.float32
    np.testing.assert_array_equal(made_inside, init.he_normal()(KEY, (4, 3), np.float32))
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_uniform()(KEY, (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_sideways", "normal")
    with pytest.raises(ValueError, match="less or equal"):
        init.delta_orthogonal()(KEY, (3, 4, 2))
    assert init.xavier_uniform is init.glorot_uniform and init.kaiming_normal is init.he_normal


# --- flatten_util.ravel_pytree ----------------------------------------------------------------

def test_ravel_pytree_against_jax():
    params = {"w": np.arange(6, dtype=np.float32).reshape(2, 3),
              "b": (np.array([7.0, 8.0], np.float32), 9.0), "n": None}
    flat, unravel = ravel_pytree(params)
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(flat, [7.0, 8.0, 9.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0])  # JAX's

    def loss(v):
        t = unravel(v)
        return (t["w"] ** 2).sum() * t["b"][1] + jnp.sin(t["b"][0]).sum()

    jax_grad = [0.7539022564888, -0.1455000340938568, 55.0, 0.0, 18.0, 36.0, 54.0, 72.0, 90.0]
    np.testing.assert_allclose(astjax.grad(loss)(flat), jax_grad, rtol=1e-6)
    np.testing.assert_allclose(astjax.jit(astjax.grad(loss))(flat), jax_grad, rtol=1e-6)
    back = astjax.jit(unravel)(flat * 2)
    assert back["n"] is None and back["w"].shape == (2, 3) and back["b"][1].shape == ()
    np.testing.assert_array_equal(back["w"], params["w"] * 2)
    stacked = astjax.vmap(unravel)(jnp.stack([flat, flat + 1]))
    np.testing.assert_array_equal(stacked["w"][1], params["w"] + 1)
    empty, unravel_empty = ravel_pytree(())
    assert empty.dtype == np.float32 and empty.shape == (0,) and unravel_empty(empty) == ()


def test_ravel_pytree_mixed_dtypes():
    """The flat array has the promoted dtype; unravel casts back and, as JAX's, refuses
    another dtype (with one leaf dtype it takes any, so tangents of other dtypes pass)."""
    params = {"i": np.arange(3, dtype=np.int32), "f": np.array([1.5, 2.5], np.float32)}
    flat, unravel = ravel_pytree(params)
    assert flat.dtype == np.float32
    np.testing.assert_array_equal(flat, [1.5, 2.5, 0.0, 1.0, 2.0])
    for back in (unravel(flat), astjax.jit(unravel)(flat)):
        assert back["i"].dtype == np.int32 and back["f"].dtype == np.float32
        np.testing.assert_array_equal(back["i"], [0, 1, 2])
    with pytest.raises(TypeError, match="expected dtype float32"):
        unravel(flat.astype(np.int32))
    _, unravel_one = ravel_pytree([np.ones(2, np.float32)])
    assert unravel_one(np.zeros(2, np.int32))[0].dtype == np.int32
