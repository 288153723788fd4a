"""``vmap`` over a batch of PRNG keys draws, for each key, what that key draws alone.

Every sampler of ``astjax.random`` is checked against the stack of its eager per-key
results (never against recorded values), under ``vmap`` and ``jit(vmap(...))``, in both
counter layouts (``jax_threefry_partitionable``). Bit for bit, except gamma, beta,
dirichlet, multivariate_normal and orthogonal and the samplers built on gamma (chisquare,
f, t, generalized_normal, ball): they go through NumPy's power, sums, einsum and QR, whose
last bit may depend on the layout of the arrays they are given (a batch of draws or one
draw), so they are compared to rtol 1e-6 (here they are bit-identical too).

Arrays that the samplers take as parameters (logits, mean, alpha, ...) are computed at run
time in compiled code, whose shapes are symbolic: the samplers are called with ``shape=``.

The samplers are ``def``s, one per line, not lambdas: astjax finds a function's source by
its line (two lambdas on one line are not told apart).
"""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
import astjax.random as random

LOGITS = np.array([0.1, -0.5, 2.0, 0.3], np.float32)
LOGITS_2D = np.array([[0.1, 0.5, -1.0], [2.0, 0.0, 0.3], [0.0, 0.0, 1.0]], np.float32)
P = np.array([0.1, 0.2, 0.3, 0.15, 0.25], np.float32)
POPULATION = np.arange(10, 16).astype(np.int32)
MATRIX = np.arange(12).reshape(3, 4).astype(np.float32)
MEAN = np.array([1.0, -1.0], np.float32)
COV = np.array([[2.0, 0.3], [0.3, 1.0]], np.float32)
ALPHA = np.array([0.5, 1.5, 3.0], np.float32)
LONG = np.arange(1700).astype(np.int32)  # shuffled in 2 rounds (1 up to 1625 elements)

CLOSE = {"gamma", "beta", "dirichlet", "multivariate_normal", "chisquare", "f", "t",
         "generalized_normal", "ball", "orthogonal"}


@pytest.fixture
def layout():
    """Set jax_threefry_partitionable for a test, restoring the default after it."""
    def apply(partitionable):
        astjax.config.update("jax_threefry_partitionable", partitionable)
    yield apply
    apply(True)


def make_keys(n=3, seed=7):
    return random.split(random.PRNGKey(seed), n)


def per_key(fn, keys, *params):
    """The eager results of ``fn`` for each key (and each row of the params), stacked
    (each element stacked, for a tuple of results)."""
    outs = [fn(k, *[p[i] for p in params]) for i, k in enumerate(np.asarray(keys))]
    if isinstance(outs[0], tuple):
        return tuple(np.stack([np.asarray(o[j]) for o in outs]) for j in range(len(outs[0])))
    return np.stack([np.asarray(o) for o in outs])


def check(name, got, want):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), name
        for j, (g, w) in enumerate(zip(got, want)):
            check(f"{name}[{j}]", g, w)
        return
    got = np.asarray(got)
    assert got.shape == want.shape and got.dtype == want.dtype, \
        (name, got.shape, got.dtype, want.shape, want.dtype)
    if name.split("[")[0] in CLOSE:
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


# --- one call of each public sampler ----------------------------------------------------------

def uniform(key):
    return random.uniform(key, (3,), minval=-1.0, maxval=2.0)


def normal(key):
    return random.normal(key, (2, 2))


def truncated_normal(key):
    return random.truncated_normal(key, -1.0, 2.0, (3,))


def bernoulli(key):
    return random.bernoulli(key, 0.3, (5,))


def randint(key):
    return random.randint(key, (5,), 0, 10)


def choice(key):
    return random.choice(key, 10, (3,))


def permutation(key):
    return random.permutation(key, 6)


def categorical(key):
    return random.categorical(key, LOGITS, shape=())


def gumbel(key):
    return random.gumbel(key, (3,))


def exponential(key):
    return random.exponential(key, (3,))


def laplace(key):
    return random.laplace(key, (3,))


def logistic(key):
    return random.logistic(key, (3,))


def multivariate_normal(key):
    return random.multivariate_normal(key, MEAN, COV, shape=(2,))


def gamma(key):
    return random.gamma(key, 0.7, (3,))


def beta(key):
    return random.beta(key, 2.0, 0.5, (2,))


def dirichlet(key):
    return random.dirichlet(key, ALPHA, ())


def bits(key):
    return random.bits(key, (4,))


def split(key):
    return random.split(key)


def fold_in(key):
    return random.fold_in(key, 3)


def cauchy(key):
    return random.cauchy(key, (3,))


def lognormal(key):
    return random.lognormal(key, 0.5, (3,))


def pareto(key):
    return random.pareto(key, 2.0, (3,))


def rayleigh(key):
    return random.rayleigh(key, 2.0, (3,))


def wald(key):
    return random.wald(key, 1.5, (3,))


def weibull_min(key):
    return random.weibull_min(key, 2.0, 1.5, (3,))


def maxwell(key):
    return random.maxwell(key, (3,))


def double_sided_maxwell(key):
    return random.double_sided_maxwell(key, 1.0, 2.0, (3,))


def rademacher(key):
    return random.rademacher(key, (4,))


def triangular(key):
    return random.triangular(key, 0.0, 0.3, 1.0, (3,))


def geometric(key):
    return random.geometric(key, 0.3, (4,))


def orthogonal(key):
    return random.orthogonal(key, 3)


def chisquare(key):
    return random.chisquare(key, 3.0, (2,))


def f(key):
    return random.f(key, 2.0, 5.0, (2,))


def t(key):
    return random.t(key, 3.0, (2,))


def generalized_normal(key):
    return random.generalized_normal(key, 1.5, (2,))


def ball(key):
    return random.ball(key, 3, 2, (2,))


def poisson(key):
    return random.poisson(key, np.array([2.0, 30.0], np.float32), (2,))


def binomial(key):
    return random.binomial(key, np.array([5.0, 100.0], np.float32), 0.4, (2,))


def multinomial(key):
    return random.multinomial(key, 10.0, np.array([0.2, 0.8], np.float32), shape=(2,))


SAMPLERS = [uniform, normal, truncated_normal, bernoulli, randint, choice, permutation,
            categorical, gumbel, exponential, laplace, logistic, multivariate_normal, gamma,
            beta, dirichlet, bits, split, fold_in, cauchy, lognormal, pareto, rayleigh, wald,
            weibull_min, maxwell, double_sided_maxwell, rademacher, triangular, geometric,
            orthogonal, chisquare, f, t, generalized_normal, ball, poisson, binomial,
            multinomial]


def test_every_public_sampler_is_covered():
    public = set(random.__all__) - {"PRNGKey", "key", "key_data", "key_impl", "wrap_key_data",
                                    "clone", "loggamma"}  # loggamma: gamma's code, as beta's
    assert public == {f.__name__ for f in SAMPLERS}


GAMMA_FAMILY = [gamma, beta, dirichlet]  # one compiled function: they share gamma's code
GAMMA_DERIVED = [chisquare, f, t, generalized_normal, ball]  # likewise
COUNTS = [poisson, binomial, multinomial]  # likewise, the rejection loops


@pytest.mark.parametrize("fn", [f for f in SAMPLERS
                                if f not in GAMMA_FAMILY + GAMMA_DERIVED + COUNTS],
                         ids=lambda f: f.__name__)
def test_vmap_over_keys(fn):
    keys = make_keys()
    check(fn.__name__, astjax.vmap(fn)(keys), per_key(fn, keys))


def gamma_family(key):
    return gamma(key), beta(key), dirichlet(key)


def test_vmap_over_keys_gamma_family():
    keys = make_keys()
    got, want = astjax.vmap(gamma_family)(keys), per_key(gamma_family, keys)
    for fn, g, w in zip(GAMMA_FAMILY, got, want):
        check(fn.__name__, g, w)


def gamma_derived(key):
    return chisquare(key), f(key), t(key), generalized_normal(key), ball(key)


def test_vmap_over_keys_gamma_derived():
    keys = make_keys()
    got, want = astjax.vmap(gamma_derived)(keys), per_key(gamma_derived, keys)
    for fn, g, w in zip(GAMMA_DERIVED, got, want):
        check(fn.__name__, g, w)


def counts(key):
    return poisson(key), binomial(key), multinomial(key)


def test_vmap_over_keys_counts():
    keys = make_keys()
    got, want = astjax.vmap(counts)(keys), per_key(counts, keys)
    for fn, g, w in zip(COUNTS, got, want):
        check(fn.__name__, g, w)


# --- jit(vmap(...)), the sorting-based samplers and other variants ----------------------------
# (grouped, one compiled function per group: compiling is what takes the time here, and a
# group compiles the code its samplers share, the hash, once)

def choice_and_permutation_variants(key):
    return (random.choice(key, 10, (4,), replace=False),
            random.choice(key, 5, (4,), p=P),
            random.choice(key, 5, (3,), replace=False, p=P),
            random.choice(key, POPULATION, (2, 2)),
            random.choice(key, MATRIX, (2,), replace=False, axis=1),
            random.permutation(key, MATRIX, axis=1),
            random.permutation(key, MATRIX, axis=1, independent=True),
            random.permutation(key, LONG))


def categorical_variants(key):
    return (random.categorical(key, LOGITS, shape=(3,), replace=False),
            random.categorical(key, LOGITS_2D, axis=0, shape=(2, 3)),
            random.categorical(key, LOGITS_2D, axis=0, shape=(2, 3), replace=False))


def keys_integers_and_modes(key):
    return (split(key), random.split(key, (2, 3)), fold_in(key), bits(key),
            random.bits(key, (5,), jnp.uint8), randint(key),
            random.randint(key, (5,), -3, 7, dtype=jnp.int8), bernoulli(key),
            random.bernoulli(key, 0.3, (4,), mode="high"), choice(key), permutation(key),
            categorical(key), random.categorical(key, LOGITS, shape=(2,), mode="high"))


def floats_and_modes(key):
    return (uniform(key), random.uniform(key, (), jnp.float16), normal(key),
            random.normal(key, (2,), jnp.complex64), truncated_normal(key), gumbel(key),
            random.gumbel(key, (3,), mode="high"), exponential(key), laplace(key),
            logistic(key), multivariate_normal(key))


# (the samplers of the last two are each checked under vmap above)
GROUPS = [(choice_and_permutation_variants, False), (categorical_variants, False),
          (keys_integers_and_modes, True), (floats_and_modes, True)]


@pytest.mark.parametrize("group,jitted", GROUPS,
                         ids=[f"{g.__name__}-{'jit_vmap' if j else 'vmap'}" for g, j in GROUPS])
def test_vmap_over_keys_groups(group, jitted):
    keys = make_keys()
    batched = astjax.vmap(group)
    if jitted:
        batched = astjax.jit(batched)
    got, want = batched(keys), per_key(group, keys)
    check(group.__name__, got[:-1], want[:-1])
    # (the last draw of floats_and_modes is multivariate_normal's: compared to rtol 1e-6)
    last = "multivariate_normal" if group is floats_and_modes else group.__name__
    check(last, got[-1], want[-1])


# the original counter layout hashes other counters, splits keys differently and packs 8-
# and 16-bit values into 32-bit words
def original_layout(key):
    return (uniform(key), randint(key), bits(key), random.bits(key, (5,), jnp.uint8),
            random.randint(key, (3,), 0, 200, dtype=jnp.uint8), random.split(key, (2, 3)),
            fold_in(key), permutation(key), random.permutation(key, LONG),
            random.choice(key, 10, (4,), replace=False), categorical(key))


def test_vmap_over_keys_original_layout(layout):
    layout(False)
    keys = make_keys()
    check("original_layout", astjax.vmap(original_layout)(keys), per_key(original_layout, keys))


# --- keys batched with parameters, batch sizes and axes ----------------------------------------

def uniform_between(key, low):
    return random.uniform(key, (2,), minval=low, maxval=low + 2.0)


def bernoulli_of(key, p):
    return random.bernoulli(key, p, (4,))


def categorical_of(key, logits):
    return random.categorical(key, logits, shape=(2,))


def permutation_of(key, x):
    return random.permutation(key, x)


def gamma_of(key, a):
    return random.gamma(key, a, (3,))


_rng = np.random.default_rng(0)
WITH_PARAMS = [
    (uniform_between, _rng.normal(size=3).astype(np.float32)),
    (bernoulli_of, _rng.uniform(size=(3, 4)).astype(np.float32)),
    (categorical_of, _rng.normal(size=(3, 5)).astype(np.float32)),
    (permutation_of, np.arange(15).reshape(3, 5).astype(np.int32)),
    (gamma_of, _rng.uniform(0.2, 3.0, size=(3, 3)).astype(np.float32)),
]


@pytest.mark.parametrize("fn,params", WITH_PARAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_vmap_over_keys_and_parameters(fn, params):
    keys = make_keys()
    name = "gamma" if fn is gamma_of else fn.__name__
    # (jit(vmap(gamma)): gamma's while loops with per-example alpha, compiled)
    batched = astjax.jit(astjax.vmap(fn)) if fn is gamma_of else astjax.vmap(fn)
    check(name, batched(keys, params), per_key(fn, keys, params))
    if fn not in (categorical_of, permutation_of):
        return
    # one key for every row of the parameters (whose sizes are known at run time only)
    key = make_keys(1)[0]
    want = np.stack([np.asarray(fn(key, p)) for p in params])
    check(name, astjax.vmap(fn, in_axes=(None, 0))(key, params), want)


def test_batch_of_one_key_nested_vmap_and_in_axes():
    keys = make_keys(1)
    check("permutation", astjax.vmap(permutation)(keys), per_key(permutation, keys))
    grid = random.split(random.PRNGKey(2), (2, 3))
    want = np.stack([per_key(choice, row) for row in np.asarray(grid)])
    check("choice", astjax.vmap(astjax.vmap(choice))(grid), want)
    keys = make_keys(4)
    want = per_key(randint, keys)
    check("randint", astjax.vmap(randint, in_axes=1, out_axes=1)(
        jnp.asarray(np.asarray(keys).T)), want.T)


# --- compiled parameters known at run time only ---------------------------------------------------

def categorical_given(key, logits):
    return random.categorical(key, logits, shape=())


def categorical_no_shape(key):
    return random.categorical(key, jnp.zeros(4))


def dirichlet_given(key, alpha):
    return random.dirichlet(key, alpha, (2,))


def multivariate_normal_given(key, mean, cov):
    return random.multivariate_normal(key, mean, cov, shape=())


def choice_given(key, a):
    return random.choice(key, a, (3,), replace=False)


def test_jit_with_parameters_known_at_run_time():
    key = make_keys(1)[0]
    check("categorical", astjax.jit(categorical_given)(key, LOGITS),
          np.asarray(categorical_given(key, LOGITS)))
    check("dirichlet", astjax.jit(dirichlet_given)(key, ALPHA),
          np.asarray(dirichlet_given(key, ALPHA)))
    check("multivariate_normal", astjax.jit(multivariate_normal_given)(key, MEAN, COV),
          np.asarray(multivariate_normal_given(key, MEAN, COV)))
    check("choice", astjax.jit(choice_given)(key, POPULATION),
          np.asarray(choice_given(key, POPULATION)))
    check("permutation", astjax.jit(permutation_of)(key, LONG),
          np.asarray(permutation_of(key, LONG)))


def test_sample_shape_from_run_time_logits_needs_shape():
    with pytest.raises(TypeError, match="logits must be known.*pass shape="):
        astjax.vmap(categorical_no_shape)(make_keys())
