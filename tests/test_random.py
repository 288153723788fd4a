"""astjax.random against JAX: recorded outputs (tests/data/random_jax.npz, made by
tools/make_random_data.py with jax 0.10.2 on an x86-64 CPU), so no JAX is needed here.

Bit for bit: every integer and boolean result (keys, bits, randint, permutation, choice,
categorical, bernoulli), every uniform float, and the float32 results of normal,
truncated_normal, exponential, laplace, logistic and gumbel (astjax computes log, log1p,
exp, erf and erfinv as XLA's CPU code does, fused multiply-adds included).

To float rounding (checked as |got - want| <= TOL * eps * max(1, |want|)):
* gamma, loggamma, beta, dirichlet: XLA computes the Marsaglia-Tsang constant
  (1/3)/sqrt(d) as (1/3) * rsqrt(d) with the CPU's approximate rsqrt instruction and a
  Newton step, which is hardware-dependent; most draws are still bit-identical (checked).
* multivariate_normal: LAPACK/XLA's Cholesky and dot products sum in another order.
* float64 (x64) results: astjax uses NumPy's log/log1p/exp there; XLA's float64 log1p
  is itself up to ~40 eps from the true value. float16: a few last-bit differences.
"""
import json
import os

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
import astjax.random as random
from astjax._src.ops import bits as _bits
from astjax._src.random import threefry

DATA = os.path.join(os.path.dirname(__file__), "data", "random_jax.npz")
_NPZ = np.load(DATA)
RECORD = json.loads(str(_NPZ["cases"]))
CASES = RECORD["cases"]
EXACT = {"PRNGKey", "split", "fold_in", "bits", "uniform", "randint", "bernoulli", "choice",
         "permutation", "categorical"}
EXACT_FLOAT32 = {"normal", "truncated_normal", "exponential", "laplace", "logistic", "gumbel"}
MOSTLY_EXACT_FLOAT32 = {"gamma", "loggamma", "beta", "dirichlet"}  # at least half per case
TOL = {"float16": 8, "float32": 8, "float64": 128}


@pytest.fixture
def settings():
    """Set partitionable/x64 for a test and restore the defaults after it."""
    def apply(partitionable=True, x64=False):
        astjax.config.update("jax_threefry_partitionable", partitionable)
        astjax.config.update("jax_enable_x64", x64)
    yield apply
    apply()


def decode(value):
    if isinstance(value, dict) and "array" in value:
        return np.asarray(value["array"], value["dtype"])
    if isinstance(value, dict) and "dtype" in value:
        return np.dtype(value["dtype"])
    if isinstance(value, dict) and "shape" in value:
        return tuple(value["shape"])
    if isinstance(value, dict) and "int" in value:
        return int(value["int"])
    if isinstance(value, dict) and "np" in value:
        return np.asarray(value["np"]).astype(value["npdtype"])[()]
    return value


def key_for(case):
    key = random.PRNGKey(case["seed"])
    if case["fold"] is not None:
        key = random.fold_in(key, case["fold"])
    return key


def run_case(case, fn=None):
    args = [decode(a) for a in case["args"]]
    kwargs = {k: decode(v) for k, v in case["kwargs"].items()}
    if case["fn"] == "PRNGKey":
        return random.PRNGKey(*args)
    return (fn or getattr(random, case["fn"]))(key_for(case), *args, **kwargs)


def check_against_jax(case, got, want):
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (case["fn"], got.shape, got.dtype, want.shape, want.dtype)
    fn = case["fn"]
    if fn in EXACT or want.dtype.kind not in "fc" or \
            fn in EXACT_FLOAT32 and want.dtype == np.float32:
        np.testing.assert_array_equal(got, want, err_msg=json.dumps(case))
        return
    if want.dtype.kind == "c":  # the real and imaginary parts as floats
        got, want = np.stack([got.real, got.imag]), np.stack([want.real, want.imag])
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    bound = TOL[want.dtype.name] * float(np.finfo(want.dtype).eps) * np.maximum(1.0, np.abs(w))
    bad = ~same & ~(np.abs(g - w) <= bound)
    assert not bad.any(), (json.dumps(case), g[bad][:5], w[bad][:5])
    if fn in MOSTLY_EXACT_FLOAT32 and want.dtype == np.float32:
        assert 2 * same.sum() >= same.size, (json.dumps(case), same.mean())


def _case_id(i):
    c = CASES[i]
    return f"{i}-{c['fn']}-{'P' if c['partitionable'] else 'O'}{'-x64' if c['x64'] else ''}"


def test_data_is_from_jax():
    assert RECORD["jax_version"] == "0.10.2"
    assert len(CASES) > 300
    assert {c["fn"] for c in CASES} >= {
        "PRNGKey", "split", "fold_in", "bits", "uniform", "normal", "truncated_normal",
        "bernoulli", "randint", "choice", "permutation", "categorical", "gumbel",
        "exponential", "laplace", "logistic", "multivariate_normal", "gamma", "beta",
        "dirichlet"}


@pytest.mark.parametrize("i", range(len(CASES)), ids=_case_id)
def test_matches_jax(i, settings):
    case = CASES[i]
    settings(case["partitionable"], case["x64"])
    check_against_jax(case, run_case(case), _NPZ[f"out{i}"])


# --- Threefry-2x32 -------------------------------------------------------------------------------

# Known-answer vectors of Random123 (kat_vectors, threefry2x32 with 20 rounds):
# (counter words, key words) -> output words
RANDOM123_KAT = [
    ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x243F6A88, 0x85A308D3), (0x13198A2E, 0x03707344), (0xC4923A9C, 0x483DF7A0)),
]


@pytest.mark.parametrize("counter,key,expected", RANDOM123_KAT)
def test_threefry_known_answers(counter, key, expected):
    u32 = np.uint32
    out = threefry.threefry2x32(u32(key[0]), u32(key[1]), jnp.asarray([u32(counter[0])]),
                                jnp.asarray([u32(counter[1])]))
    assert [int(np.asarray(w)[0]) for w in out] == list(expected)
    # the same block through JAX's threefry_2x32 interface (counts split in halves)
    out = threefry.threefry_2x32(key, np.array(counter, np.uint32))
    assert [int(v) for v in np.asarray(out)] == list(expected)


def test_threefry_2x32_matches_jax():
    for k, c, want in zip(_NPZ["threefry_keys"], _NPZ["threefry_counts"],
                          _NPZ["threefry_out"]):
        np.testing.assert_array_equal(np.asarray(threefry.threefry_2x32(k, c)), want)


def test_threefry_vectorized_over_counters():
    k1, k2 = np.uint32(0x13198A2E), np.uint32(0x03707344)
    x0 = jnp.asarray(np.array([0x243F6A88, 0, 0xFFFFFFFF], np.uint32))
    x1 = jnp.asarray(np.array([0x85A308D3, 0, 0xFFFFFFFF], np.uint32))
    y0, y1 = threefry.threefry2x32(k1, k2, x0, x1)
    assert int(np.asarray(y0)[0]) == 0xC4923A9C and int(np.asarray(y1)[0]) == 0x483DF7A0
    for j in (1, 2):
        one = threefry.threefry2x32(k1, k2, x0[j:j + 1], x1[j:j + 1])
        assert int(np.asarray(one[0])[0]) == int(np.asarray(y0)[j])


# --- keys and config -----------------------------------------------------------------------------

def test_key_representation_and_key_data():
    key = random.PRNGKey(42)
    assert key.dtype == np.uint32 and key.shape == (2,)
    np.testing.assert_array_equal(np.asarray(key), [0, 42])
    np.testing.assert_array_equal(np.asarray(random.key(42)), [0, 42])
    keys = random.split(key, (2, 3))
    assert keys.shape == (2, 3, 2)
    assert random.key_data(keys) is keys
    np.testing.assert_array_equal(np.asarray(random.key_data(np.asarray(key))), [0, 42])


def test_partitionable_is_a_config_option(settings):
    assert astjax.config.jax_threefry_partitionable is True  # JAX's current default
    key = random.PRNGKey(0)
    on = np.asarray(random.split(key, 3))
    settings(partitionable=False)
    off = np.asarray(random.split(key, 3))
    assert not np.array_equal(on, off)
    # the first key of a split(…, 2) differs, fold_in does not depend on the layout
    np.testing.assert_array_equal(np.asarray(random.fold_in(key, 5)),
                                  [int(v) for v in np.asarray(random.fold_in(key, 5))])


def test_samplers_do_not_change_their_key():
    key = random.PRNGKey(7)
    a = np.asarray(random.normal(key, (4,)))
    b = np.asarray(random.normal(key, (4,)))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.asarray(key), [0, 7])


# --- argument checks -----------------------------------------------------------------------------

def test_wrong_keys_are_rejected():
    with pytest.raises(TypeError, match="unexpected PRNG key type int"):
        random.uniform(5)
    with pytest.raises(TypeError, match="uint32 array of shape \\(2,\\).*dtype int32"):
        random.normal(jnp.zeros(2, jnp.int32))
    with pytest.raises(TypeError, match="shape \\(3,\\)"):
        random.split(jnp.zeros(3, jnp.uint32))
    with pytest.raises(ValueError, match="single key.*shape \\(3, 2\\)"):
        random.uniform(random.split(random.PRNGKey(0), 3))
    with pytest.raises(TypeError, match="unexpected PRNG key type list"):
        random.bits([0, 1])


def test_seeds():
    with pytest.raises(TypeError, match="must be an integer"):
        random.PRNGKey(1.5)
    with pytest.raises(TypeError, match="scalar seed"):
        random.PRNGKey(np.array([1, 2]))
    with pytest.raises(TypeError, match="given a PRNG key"):
        random.PRNGKey(random.PRNGKey(0))
    with pytest.raises(OverflowError):
        random.PRNGKey(2 ** 64)
    with pytest.raises(OverflowError, match="does not fit in uint32"):
        random.fold_in(random.PRNGKey(0), -1)
    with pytest.raises(TypeError, match="accepts a scalar"):
        random.fold_in(random.PRNGKey(0), np.array([1, 2]))


def test_bad_shapes_and_dtypes():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="non-negative"):
        random.uniform(key, (-1,))
    with pytest.raises(TypeError, match="tuple of non-negative ints"):
        random.normal(key, (2.5,))
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.uniform(key, (2,), minval=jnp.zeros(3))
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.randint(key, (3,), jnp.zeros((2, 3), jnp.int32), 5)
    with pytest.raises(ValueError, match="must be a float dtype"):
        random.uniform(key, (2,), jnp.int32)
    with pytest.raises(TypeError, match="only accepts integer dtypes"):
        random.randint(key, (2,), 0, 5, jnp.float32)
    with pytest.raises(ValueError, match="unsigned int dtype"):
        random.bits(key, (2,), jnp.int32)
    with pytest.raises(TypeError, match="probability `p` must have a floating dtype"):
        random.bernoulli(key, jnp.array([1, 0]))
    with pytest.raises(ValueError, match="expected one of"):
        random.bernoulli(key, 0.5, mode="medium")
    with pytest.raises(ValueError, match="valid mode"):
        random.gumbel(key, (2,), mode="middle")
    assert random.uniform(key, 3).shape == (3,)  # an int is a 1-D shape, as in JAX
    assert random.split(key, 0).shape == (0, 2)


def test_minval_above_maxval_is_an_error():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="minval > maxval"):
        random.uniform(key, (2,), minval=3.0, maxval=1.0)
    with pytest.raises(ValueError, match="minval > maxval"):
        random.randint(key, (2,), 5, 1)
    # equal bounds are JAX's degenerate case: minval
    np.testing.assert_array_equal(np.asarray(random.randint(key, (3,), 4, 4)), [4, 4, 4])
    np.testing.assert_array_equal(np.asarray(random.uniform(key, (2,), minval=2.0,
                                                            maxval=2.0)), [2.0, 2.0])


def test_sampling_errors():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="Cannot take a larger sample"):
        random.choice(key, 3, (4,), replace=False)
    with pytest.raises(ValueError, match="p must be None or a 1D vector"):
        random.choice(key, 3, (2,), p=jnp.ones(4) / 4)
    with pytest.raises(TypeError, match="must be a sequence"):
        random.choice(key, 3, 2)
    with pytest.raises(ValueError, match="greater than 0"):
        random.choice(key, 0, (2,))
    with pytest.raises(ValueError, match="cannot exceed number of categories"):
        random.categorical(key, jnp.zeros(3), shape=(4,), replace=False)
    with pytest.raises(ValueError, match="cov.shape == \\(..., n, n\\)"):
        random.multivariate_normal(key, jnp.zeros(2), jnp.eye(3))
    with pytest.raises(ValueError, match="method must be one of"):
        random.multivariate_normal(key, jnp.zeros(2), jnp.eye(2), method="qr")
    with pytest.raises(ValueError, match="alpha.ndim >= 1"):
        random.dirichlet(key, 1.0)
    with pytest.raises(TypeError, match="integer or at least 1-dimensional"):
        random.permutation(key, 2.5)


# --- compiled ------------------------------------------------------------------------------------

def uniform_of(key, shape):
    return random.uniform(key, shape)


def normal_of(key, shape, dtype):
    return random.normal(key, shape, dtype)


def split_of(key, num):
    return random.split(key, num)


def randint_of(key, shape, minval, maxval):
    return random.randint(key, shape, minval, maxval)


def bits_and_fold_in(key, shape, data):
    return random.bits(random.fold_in(key, data), shape)


def choice_of(key, shape):
    return random.choice(key, 5, shape)


def gamma_of(key, a):
    return random.gamma(key, a)


def gamma_shaped(key, a):
    return random.gamma(key, a, (3,))


def categorical_of(key, logits):
    return random.categorical(key, logits)


def key_then_sample(seed):
    k1, k2 = random.split(random.PRNGKey(seed))
    return random.normal(k1, (3,)) * 2.0 + random.uniform(k2, (3,), minval=-1.0, maxval=1.0)


@pytest.mark.parametrize("partitionable", [True, False])
def test_jit_matches_recorded_jax(partitionable, settings):
    settings(partitionable)
    jits = {"uniform": astjax.jit(uniform_of, static_argnums=1),
            "normal": astjax.jit(normal_of, static_argnums=(1, 2)),
            "split": astjax.jit(split_of, static_argnums=1),
            "randint": astjax.jit(randint_of, static_argnums=1)}
    checked = {}
    for i, case in enumerate(CASES):
        if case["fn"] not in jits or case["x64"] or case["partitionable"] != partitionable \
                or case["kwargs"] or checked.get(case["fn"], 0) >= 1:
            continue
        args = [decode(a) for a in case["args"]]
        if case["fn"] == "uniform" and len(args) != 1 or case["fn"] == "randint" and len(args) != 3:
            continue
        if case["fn"] == "normal":
            args = args + [None] * (2 - len(args))
        got = jits[case["fn"]](key_for(case), *args)
        check_against_jax(case, got, _NPZ[f"out{i}"])
        checked[case["fn"]] = checked.get(case["fn"], 0) + 1
    assert set(checked) == set(jits)


def test_jit_agrees_with_eager(settings):
    key = random.PRNGKey(11)
    for partitionable in (True, False):
        settings(partitionable)
        # a fresh jit per setting: compiled code is cached by argument types only
        got = astjax.jit(bits_and_fold_in, static_argnums=1)(key, (5,), 3)
        np.testing.assert_array_equal(np.asarray(got),
                                      np.asarray(random.bits(random.fold_in(key, 3), (5,))))
        got = astjax.jit(key_then_sample)(4)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(key_then_sample(4)))


def test_jit_checks():
    key = random.PRNGKey(0)
    with pytest.raises(TypeError, match="uint32 array of shape \\(2,\\).*dtype int32"):
        astjax.jit(uniform_of, static_argnums=1)(jnp.zeros(2, jnp.int32), (2,))
    with pytest.raises(ValueError, match="non-negative"):
        astjax.jit(uniform_of, static_argnums=1)(key, (-2,))
    with pytest.raises(TypeError, match="shape must be known when the code is generated"):
        astjax.jit(choice_of)(key, (jnp.int32(3),))
    # shapes are symbolic in compiled code: a sample shape cannot come from an argument's
    a = jnp.asarray(np.array([0.5, 1.0, 2.0], np.float32))
    with pytest.raises(TypeError, match="pass shape="):
        astjax.jit(gamma_of)(key, a)
    np.testing.assert_allclose(np.asarray(astjax.jit(gamma_shaped)(key, a)),
                               np.asarray(random.gamma(key, a, (3,))), rtol=1e-6)
    with pytest.raises(TypeError, match="logits must be known"):
        astjax.jit(categorical_of)(key, jnp.zeros(3))


# --- sample shapes known only at run time ---------------------------------------------------------

def dropout(key, x, rate):
    keep = random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def samples_shaped_like(key, x):
    """Every sampler that takes a shape computed at run time: ``x.shape``, a size and a
    shape with a constant dim."""
    k = random.split(key, 8)
    return (random.bits(k[0], x.shape), random.uniform(k[1], x.shape, minval=-2.0),
            random.normal(k[2], x.shape[0]), random.randint(k[3], (2, x.shape[1]), 0, 9),
            random.truncated_normal(k[4], -1.0, 1.0, x.shape), random.gumbel(k[5], x.shape),
            random.exponential(k[6], x.shape), random.gamma(k[7], 2.0, x.shape),
            random.laplace(k[0], x.shape), random.logistic(k[1], x.shape),
            random.loggamma(k[2], 3.0, x.shape), random.beta(k[3], 2.0, 3.0, x.shape),
            random.dirichlet(k[4], jnp.ones(3), x.shape))


def negative_size(key, x):
    return random.normal(key, (x.shape[0] - 5,))


def float_size(key, x):
    return random.normal(key, (x.shape[0] * 1.5,))


def test_sample_shapes_known_only_at_run_time(settings):
    """JAX's dropout idiom ``bernoulli(key, p, x.shape)`` under jit: one compiled version
    serves every shape, and draws what the eager call draws."""
    key = random.PRNGKey(5)
    for partitionable in (True, False):
        settings(partitionable)
        jitted = astjax.jit(dropout)
        for shape in [(3, 4), (7, 2), (1, 5)]:
            x = jnp.asarray(np.arange(1.0, 1.0 + np.prod(shape), dtype=np.float32)
                            .reshape(shape))
            np.testing.assert_array_equal(np.asarray(jitted(key, x, 0.25)),
                                          np.asarray(dropout(key, x, 0.25)))
        assert len(jitted.cache) == 2  # (1, 5) has a dim known to be 1
        x = jnp.ones((4, 3), jnp.float32)
        for got, want in zip(astjax.jit(samples_shaped_like)(key, x),
                             samples_shaped_like(key, x)):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_run_time_shape_errors_name_the_users_line():
    key, x = random.PRNGKey(0), jnp.ones((3, 4))
    with pytest.raises(ValueError, match=r"test_random.py:\d+: .*non-negative"):
        astjax.jit(negative_size)(key, x)
    with pytest.raises(TypeError, match=r"test_random.py:\d+:\d+: normal: shape must be a "
                                        r"tuple of non-negative ints, got \(f32"):
        astjax.jit(float_size)(key, x)


def test_dropout_on_numba(numba_backend):
    key, x = random.PRNGKey(2), jnp.asarray(np.linspace(-1, 1, 24, dtype=np.float32)
                                            .reshape(4, 6))
    jitted = astjax.jit(dropout)
    got = jitted(key, x, 0.5)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba" and getattr(compiled, "_twin", None) is None
    np.testing.assert_array_equal(np.asarray(got), np.asarray(dropout(key, x, 0.5)))
    x = x[:3]  # another size, the same compiled version
    np.testing.assert_array_equal(np.asarray(jitted(key, x, 0.5)),
                                  np.asarray(dropout(key, x, 0.5)))
    assert len(jitted.cache) == 1


# --- gradients (reparameterized samples) and the new ops -----------------------------------------

def sum_truncated_normal(lo, hi, key):
    return jnp.sum(random.truncated_normal(key, lo, hi, (6,)))


def sum_uniform(lo, hi, key):
    return jnp.sum(random.uniform(key, (5,), minval=lo, maxval=hi))


def sum_scaled_normal(loc, scale, key):
    return jnp.sum(loc + scale * random.normal(key, (4,)))


def test_gradients_flow_to_parameters_not_keys():
    key = random.PRNGKey(3)
    want = _NPZ["gradients"]  # JAX's, for these three functions
    got = []
    for fn, args in [(sum_truncated_normal, (-1.0, 1.5)), (sum_uniform, (-1.0, 2.0)),
                     (sum_scaled_normal, (0.5, 2.0))]:
        grads = astjax.grad(fn, argnums=(0, 1))(*[jnp.float32(a) for a in args], key)
        got.extend(float(g) for g in grads)
    np.testing.assert_allclose(got, want, rtol=2e-6)


def fma_sum(x, y, z):
    return jnp.sum(jnp.fma(x, y, z))


def test_fma_rounds_once():
    # 1 + 2**-24 is not a float32; (1 + 2**-12)**2 - 1 = 2**-11 + 2**-24 needs one rounding
    x = np.float32(1 + 2.0 ** -12)
    assert float(jnp.fma(x, x, np.float32(-1.0))) == 2.0 ** -11 + 2.0 ** -24
    assert float(x * x - np.float32(1.0)) == 2.0 ** -11
    # 1 + 2**-23 + (2**-24 - 2**-70): its float64 rounding is a float32 tie, which rounded
    # again went up to 1 + 2**-22
    x, y = np.float32(1 + 2.0 ** -23), np.float32(2.0 ** -24 - 2.0 ** -47)
    assert float(jnp.fma(x, y, x)) == 1 + 2.0 ** -23
    astjax.config.update("jax_enable_x64", True)
    try:
        y = np.float64(1 + 2.0 ** -30)
        assert float(jnp.fma(y, y, -1.0)) == 2.0 ** -29 + 2.0 ** -60
    finally:
        astjax.config.update("jax_enable_x64", False)
    x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    y = jnp.asarray(np.arange(4, dtype=np.float32))
    gx, gy, gz = astjax.grad(fma_sum, argnums=(0, 1, 2))(x, y, jnp.float32(2.0))
    np.testing.assert_array_equal(np.asarray(gx), np.broadcast_to(np.arange(4), (3, 4)))
    np.testing.assert_array_equal(np.asarray(gy), np.asarray(x).sum(0))
    assert float(gz) == 12.0


def xla_f32_values(x):
    return (_bits.xla_log32(x), _bits.xla_log1p32(x), _bits.xla_exp32(x), _bits.xla_erf32(x),
            _bits.xla_erfinv32(x))


def _xla_f32_inputs():
    """Random bit patterns (every magnitude, subnormals, inf, nan), [-1, 1] and [-100, 100],
    and 8 floats either side of the algorithms' branch points, of both signs."""
    rng = np.random.default_rng(7)
    points = [0.0, 1e-45, 1e-40, 2.0 ** -126, 2.0 ** -100, 0.5, 1.0, 2.0, np.sqrt(0.5),
              np.sqrt(0.5) * 2.0 ** 40, 0.41421357, 0.41421357 - 1.0, 1.4142135, -1.0,
              87.8, 88.8, 88.72284, 87.33654, 103.97208, 88.02969, 3.832507, 4.0,
              0.99662, 0.9966212, 1.0 - 2.0 ** -24, 3.4028235e38, np.inf, np.nan]
    points = np.array(points, np.float32)
    near = [points]
    for direction in (np.inf, -np.inf):
        p = points
        for _ in range(8):
            with np.errstate(over="ignore"):
                p = np.nextafter(p, np.float32(direction))
            near.append(p)
    near = np.concatenate(near)
    return np.concatenate([near, -near,
                           rng.integers(0, 2 ** 32, 100_000, dtype=np.uint32).view(np.float32),
                           rng.uniform(-1, 1, 50_000).astype(np.float32),
                           rng.uniform(-100, 100, 50_000).astype(np.float32)])


def test_xla_f32_kernels_agree_with_eager_bit_for_bit(numba_backend):
    # generated Numba code calls random/xla_f32.py's functions compiled once (llvm.fma for
    # XLA's fused multiply-adds), the python backend runs them on arrays (exact fma)
    x = jnp.asarray(_xla_f32_inputs())
    jitted = astjax.jit(xla_f32_values)
    assert "_rt.xla_erfinv32(" in astjax.make_source(jitted)(x)  # not inlined jnp code
    got = jitted(x)
    (compiled,) = jitted.cache.values()
    assert compiled.backend == "numba"
    for g, want in zip(got, xla_f32_values(x)):
        g, want = np.asarray(g), np.asarray(want)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(g), nan)
        np.testing.assert_array_equal(g[~nan].view(np.uint32), want[~nan].view(np.uint32))


def test_xla_f32_kernels_are_inlined_into_loops():
    # LLVM's inliner left erfinv a call per element: jit of random.normal(key, (2_000_000,))
    # ran 5x slower than with the jnp code inlined, unvectorized
    from numba import njit

    from astjax._src.backends.numba_cpu import runtime as _rt

    @njit(error_model="numpy")
    def loop(x):  # as generated elementwise code calls them
        for i in range(x.shape[0]):
            x[i] = _rt.xla_erfinv32(_rt.xla_log32(x[i]))

    loop(np.ones(2, np.float32))
    calls = [line for line in next(iter(loop.inspect_llvm().values())).splitlines()
             if " call " in line and "random7xla_f32" in line]  # a mangled xla_f32 name
    assert calls == []


# JAX 0.10.2's jnp.log, log1p, exp, lax.erf, erf_inv (x86-64 CPU) of these float32 bits, as
# float32 bits (None: nan); subnormal inputs read as zero, subnormal results flushed
XLA_F32_INPUTS = [0x0, 0x80000000, 0x116c2, 0x800116c2, 0x800000, 0xbf000000, 0x3f7f227d,
                  0xbed413cd, 0x407547cb, 0x42b17218, 0xc2aeac4f, 0x7f800000, 0xff800000,
                  0x3f800000, 0x40000000, 0xc0000000]
XLA_F32_JAX = [
    [0xff800000, 0xff800000, 0xff800000, 0xff800000, 0xc2aeac50, None, 0xbb5de30d, None,
     0x3fabf86f, 0x408f895c, None, 0x7f800000, None, 0x0, 0x3f317218, None],
    [0x0, 0x80000000, 0x0, 0x80000000, 0x800000, 0xbf317218, 0x3f31033e, 0xbf08e8a6,
     0x3fc9a593, 0x408fe52d, None, 0x7f800000, None, 0x3f317218, 0x3f8c9f54, None],
    [0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f800000, 0x3f1b4598, 0x402d620d,
     0x3f292e1c, 0x4238b66e, 0x7f800000, 0x800026, 0x7f800000, 0x0, 0x402df854, 0x40ec7326,
     0x3e0a9555],
    [0x0, 0x80000000, 0x0, 0x80000000, 0x906eba, 0xbf053f7b, 0x3f575efa, 0xbee24b54,
     0x3f800000, 0x3f800000, 0xbf800000, 0x3f800000, 0xbf800000, 0x3f57bb3e, 0x3f7ecd70,
     0xbf7ecd70],
    [0x0, 0x80000000, 0x0, 0x80000000, 0x0, 0xbef430fe, 0x4004a2fd, 0xbec54b35, None, None,
     None, None, None, 0x7f800000, None, None]]


def test_xla_f32_values_are_jaxs():
    x = np.array(XLA_F32_INPUTS, np.uint32).view(np.float32)
    for got, want in zip(xla_f32_values(jnp.asarray(x)), XLA_F32_JAX):
        got = np.asarray(got)
        assert [None if np.isnan(g) else int(b) for g, b in zip(got, got.view(np.uint32))] \
            == want


def test_bit_ops():
    u = jnp.asarray(np.array([1, 0x80000000, 0xFFFFFFFF], np.uint32))
    np.testing.assert_array_equal(np.asarray(jnp.left_shift(u, 31)), [0x80000000, 0, 0x80000000])
    np.testing.assert_array_equal(np.asarray(jnp.right_shift(u, 31)), [0, 1, 1])  # logical
    np.testing.assert_array_equal(np.asarray(jnp.right_shift(u, 32)), [0, 0, 0])  # as XLA
    np.testing.assert_array_equal(np.asarray(jnp.left_shift(u, 40)), [0, 0, 0])
    assert int(jnp.right_shift(jnp.int32(-8), 40)) == -1
    assert jnp.left_shift(u, 1).dtype == np.uint32
    assert float(jnp.nextafter(jnp.float32(1.0), 2.0)) == 1.0 + 2.0 ** -23
    keys = jnp.asarray(np.array([[3, 1, 2, 1], [0, 0, 1, 0]], np.uint32))
    np.testing.assert_array_equal(np.asarray(jnp.argsort(keys)), [[1, 3, 2, 0], [0, 1, 3, 2]])
    np.testing.assert_array_equal(np.asarray(jnp.argsort(keys, axis=0)),
                                  [[1, 1, 1, 1], [0, 0, 0, 0]])
    assert jnp.argsort(keys).dtype == np.int32
