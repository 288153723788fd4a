"""astjax.random's derived samplers (cauchy ... multinomial) against JAX 0.10.2.

The expected values are JAX's (x86-64 CPU, key ``PRNGKey(42)``), written here as literals
from an oracle run (``PYTHONPATH=/work/jaxsite``: ``np.asarray(jax.random.NAME(key, *args,
**kwargs)).tolist()``), so no JAX is needed.

Bit for bit: the samplers whose inputs astjax reproduces exactly (uniform, normal,
exponential, bernoulli), with XLA's fusions followed (wald's multiply-adds, maxwell's order
of summation), and the counts of poisson, binomial and multinomial (their rejection loops'
acceptance tests may still differ in rare draws: lgamma is SciPy's, not XLA's; 1 draw in
40000 for poisson with lam = 40). To float rounding (|got - want| <= 64 eps *
max(1, |want|)): the gamma-based ones (chisquare, t, f, generalized_normal, ball), as gamma
is (XLA's approximate rsqrt; f follows XLA's rewrite of (a / b) / (c / d) as
(a * d) / (b * c)), and orthogonal (LAPACK's QR, not XLA's; most entries are still
bit-identical).
"""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
import astjax.random as random

ROUNDED = {"chisquare", "t", "f", "generalized_normal", "ball", "orthogonal"}

CASES = [
    ("cauchy", ((4,),), {},
     'float32', [-0.03548463061451912, 0.6337261199951172, 0.38244056701660156, 0.1940706968307495]),
    ("lognormal", (np.float32(0.5), (4,)), {},
     'float32', [0.9859473705291748, 1.2630960941314697, 1.159340739250183, 1.0797969102859497]),
    ("lognormal", (0.5,), {"shape": (3,), "dtype": np.float16},
     'float16', [0.4892578125, 0.6455078125, 2.68359375]),
    ("pareto", (np.array([1.0, 2.0, 3.0], np.float32),), {},
     'float32', [1.9558355808258057, 1.7672069072723389, 1.3761273622512817]),
    ("rayleigh", (2.0, (4,)), {},
     'float32', [2.3933022022247314, 1.7571814060211182, 1.9678773880004883, 2.1503593921661377]),
    ("wald", (np.array([0.5, 1.5, 3.0], np.float32),), {},
     'float32', [0.5275740027427673, 2.6983466148376465, 0.4380342960357666]),
    ("weibull_min", (2.0, 1.5, (4,)), {},
     'float32', [1.5326144695281982, 2.181030750274658, 1.943356990814209, 1.7568422555923462]),
    ("maxwell", ((2, 2),), {},
     'float32', [[0.553582489490509, 0.293285071849823], [1.708603024482727, 1.5084577798843384]]),
    ("double_sided_maxwell", (1.0, np.array([1.0, 2.0], np.float32), (3,)), {},
     'float32', [[-0.38102173805236816, -0.3513779640197754], [3.2220213413238525, 2.351099967956543], [2.677055835723877, 2.666670560836792]]),
    ("rademacher", ((6,),), {},
     'int32', [1, -1, -1, -1, 1, -1]),
    ("rademacher", ((4,),), {"dtype": np.float32},
     'float32', [1.0, -1.0, -1.0, -1.0]),
    ("triangular", (0.0, np.array([0.2, 0.5, 0.9], np.float32), 1.0), {},
     'float32', [0.360443651676178, 0.5998732447624207, 0.7447444796562195]),
    ("geometric", (np.array([0.1, 0.3, 0.5, 0.9], np.float32),), {},
     'int32', [7, 2, 1, 1]),
    ("orthogonal", (3,), {},
     'float32', [[-0.01952970027923584, 0.9952677488327026, 0.09518947452306747], [0.10594390332698822, -0.09261152893304825, 0.9900500178337097], [-0.99418044090271, -0.02941983938217163, 0.10363386571407318]]),
    ("orthogonal", (2, (2,)), {"m": 3},
     'float32', [[[-0.08792734146118164, 0.918591320514679, -0.3853037655353546], [0.8722633719444275, 0.2578020691871643, 0.41556572914123535]], [[-0.9120513200759888, 0.330043226480484, -0.2433796525001526], [0.09860806167125702, 0.7525968551635742, 0.6510564088821411]]]),
    ("chisquare", (3.0, (4,)), {},
     'float32', [5.87071418762207, 1.3978509902954102, 5.559423446655273, 1.4829895496368408]),
    ("t", (3.0, (4,)), {},
     'float32', [0.08987478166818619, -1.7357467412948608, 2.3520190715789795, 1.1635191440582275]),
    ("f", (2.0, 5.0, (4,)), {},
     'float32', [0.6068869233131409, 0.0762886181473732, 0.13752663135528564, 0.07212348282337189]),
    ("generalized_normal", (1.5, (4,)), {},
     'float32', [-0.8782375454902649, -0.2061624526977539, 1.160470962524414, 0.10202968865633011]),
    ("ball", (3,), {"shape": (2,)},
     'float32', [[0.3234022855758667, 0.061338748782873154, 0.01824338734149933], [0.4372413158416748, -0.07705393433570862, 0.3594384789466858]]),
    ("poisson", (np.array([0.0, 0.5, 3.0, 9.5, 10.0, 25.0, 40.0, 1000.0], np.float32),), {},
     'int32', [0, 1, 2, 7, 5, 20, 36, 953]),
    ("poisson", (4.0, (2, 3)), {},
     'int32', [[6, 3, 2], [2, 5, 3]]),
    ("binomial", (np.array([5.0, 20.0, 20.0, 200.0, 200.0, 7.5], np.float32),
                  np.array([0.3, 0.8, 0.1, 0.3, 0.7, 0.5], np.float32)), {},
     'float32', [1.0, 14.0, 2.0, 55.0, 149.0, 4.0]),
    ("binomial", (np.array([-1.0, np.inf, 10.0, 10.0], np.float32),
                  np.array([0.3, 0.3, np.nan, -0.5], np.float32)), {},
     'float32', [np.nan, np.inf, np.nan, np.nan]),
    ("multinomial", (20.0, np.array([0.2, 0.3, 0.5], np.float32)), {},
     'float32', [4.0, 4.0, 12.0]),
    ("multinomial", (np.array([10.0, 100.0], np.float32),
                     np.array([0.1, 0.0, 0.6, 0.3], np.float32)), {"shape": (2, 4)},
     'float32', [[0.0, 0.0, 7.0, 3.0], [8.0, 0.0, 64.0, 28.0]]),
]
NOT_PARTITIONABLE = [
    ("cauchy", ((4,),), {},
     'float32', [0.23723779618740082, 2.068115711212158, -5.2908220291137695, -5.039283275604248]),
    ("wald", (np.array([0.5, 1.5, 3.0], np.float32),), {},
     'float32', [0.32068413496017456, 0.4904203414916992, 0.40347766876220703]),
]


@pytest.fixture
def not_partitionable():
    astjax.config.update("jax_threefry_partitionable", False)
    yield
    astjax.config.update("jax_threefry_partitionable", True)


def check(name, got, dtype, values):
    want = np.asarray(values, dtype)
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape)
    if name in ROUNDED:
        tol = 64 * np.finfo(want.dtype).eps * np.maximum(1.0, np.abs(want))
        assert np.all(np.abs(got.astype(np.float64) - want) <= tol), (got, want)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name, args, kwargs, dtype, values", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_matches_jax(name, args, kwargs, dtype, values):
    check(name, getattr(random, name)(random.PRNGKey(42), *args, **kwargs), dtype, values)


@pytest.mark.parametrize("name, args, kwargs, dtype, values", NOT_PARTITIONABLE,
                         ids=[c[0] for c in NOT_PARTITIONABLE])
def test_matches_jax_not_partitionable(name, args, kwargs, dtype, values, not_partitionable):
    check(name, getattr(random, name)(random.PRNGKey(42), *args, **kwargs), dtype, values)


def test_argument_errors_as_jax():
    key = random.PRNGKey(0)
    with pytest.raises(ValueError, match="dtype argument to `cauchy` must be a float dtype"):
        random.cauchy(key, dtype=jnp.int32)
    with pytest.raises(ValueError, match="dtype argument to `geometric` must be an int dtype"):
        random.geometric(key, 0.5, dtype=jnp.float32)
    # lognormal's default sigma is a float32 array: it cannot be sampled as float16
    with pytest.raises(ValueError, match="cannot safely cast argument of type float32 to "
                                         "float16"):
        random.lognormal(key, dtype=jnp.float16)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        random.pareto(key, np.ones(2, np.float32), shape=(3,))
    with pytest.raises(TypeError, match="d must be an int"):
        random.ball(key, 2.5)
    with pytest.raises(ValueError, match="dtype argument to `binomial` must be a float dtype"):
        random.binomial(key, 5.0, 0.5, dtype=jnp.int32)
    with pytest.raises(ValueError, match="p must have at least one dimension"):
        random.multinomial(key, 5.0, 0.5)
    assert random.double_sided_maxwell(key, np.zeros(2, np.float32), 1.0, (3,)).shape == (3, 2)
    assert random.orthogonal(key, 2, (4,), m=5).shape == (4, 2, 5)


def test_key_impl():
    assert random.key_impl(random.PRNGKey(0)) == "threefry2x32"  # as JAX's, batched too
    assert random.key_impl(random.split(random.PRNGKey(0), 3)) == "threefry2x32"
    with pytest.raises(TypeError, match="uint32 array of shape"):
        random.key_impl(jnp.zeros(3, jnp.uint32))


def derived_draws(key, x):
    k = random.split(key, 5)
    return (random.wald(k[0], 1.5, (3,)), random.geometric(k[1], 0.3, (3,)),
            random.cauchy(k[2], x.shape), random.rademacher(k[3], x.shape),
            random.t(k[4], 3.0, (2,)), random.maxwell(k[0], (2,)),
            # no shape: the parameters' (here ()), which compiled code knows too
            random.pareto(k[1], 2.0), random.lognormal(k[2]), random.gamma(k[3], 2.0))


def test_jit_and_vmap_agree_with_eager():
    key, x = random.PRNGKey(3), jnp.ones((2, 3))
    for got, want in zip(astjax.jit(derived_draws)(key, x), derived_draws(key, x)):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    keys = random.split(key, 3)
    got = astjax.vmap(lambda k: random.weibull_min(k, 2.0, 1.5, (2,)))(keys)
    want = np.stack([np.asarray(random.weibull_min(k, 2.0, 1.5, (2,))) for k in keys])
    np.testing.assert_array_equal(np.asarray(got), want)


def wald_and_geometric(key):
    k1, k2 = random.split(key)
    return random.wald(k1, 1.5, (4,)), random.geometric(k2, 0.3, (4,))


def test_on_numba(numba_backend):
    key = random.PRNGKey(1)
    for got, want in zip(astjax.jit(wald_and_geometric)(key), wald_and_geometric(key)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def counts(key, lam):
    k1, k2, k3 = random.split(key, 3)
    return (random.poisson(k1, lam, (4,)), random.binomial(k2, 30.0, 0.6, (4,)),
            random.multinomial(k3, 12.0, jnp.array([0.5, 0.2, 0.3]), shape=(3,)))


def test_counts_compile():
    """poisson's, binomial's and multinomial's rejection loops compile and draw what they
    draw eagerly, for Knuth's and the rejection's lam. (They compile on Numba too, checked
    by hand: 43 s for poisson, 90-120 s for binomial and multinomial on a loaded machine,
    too long for the suite.)"""
    key = random.PRNGKey(4)
    jitted = astjax.jit(counts)
    for lam in (3.0, 30.0):
        for got, want in zip(jitted(key, jnp.float32(lam)), counts(key, lam)):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# JAX's d/db sum(sampler(PRNGKey(1), b, shape=(3,))) at b = 2.5 (b: the parameter below)
GRADIENTS = {
    "pareto": -0.401680052280426,
    "wald": 0.5497702956199646,
    "rayleigh": 3.675293207168579,
    "lognormal": -0.09707722812891006,
    "weibull_min": 0.17766334116458893,
    "triangular": 1.1790646314620972,
    "double_sided_maxwell": -0.5215348601341248,
}


def sum_of_draws(b, key, name):
    return jnp.sum({"pareto": lambda: random.pareto(key, b, (3,)),
                    "wald": lambda: random.wald(key, b, (3,)),
                    "rayleigh": lambda: random.rayleigh(key, b, (3,)),
                    "lognormal": lambda: random.lognormal(key, b, (3,)),
                    "weibull_min": lambda: random.weibull_min(key, 1.0, b, (3,)),
                    "triangular": lambda: random.triangular(key, 0.0, b * 0.3, b, (3,)),
                    "double_sided_maxwell": lambda: random.double_sided_maxwell(key, 0.0, b,
                                                                                (3,)),
                    }[name]())


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_of_reparameterized_samples(name):
    got = astjax.grad(sum_of_draws)(jnp.float32(2.5), random.PRNGKey(1), name)
    np.testing.assert_allclose(float(got), GRADIENTS[name], rtol=1e-6)


# jax.grad in the shape parameter with PRNGKey(1), JAX 0.10.2: an implicit derivative
# (lax.random_gamma_grad), not the one through the rejection loop (gamma's at 2.5 gave 3.155)
SHAPE_GRADIENTS = [
    (lambda a, k: jnp.sum(random.gamma(k, a, (3,))), 2.5, 3.1465044),
    (lambda a, k: jnp.sum(random.gamma(k, a, (3,))), 0.4, 1.6306304),
    (lambda a, k: jnp.sum(random.loggamma(k, a, (2,))), 0.7, 5.9387026),
    (lambda a, k: jnp.sum(random.beta(k, a, 2.0, (3,))), 1.5, 0.5127335),
    (lambda a, k: jnp.sum(random.t(k, a, (3,))), 3.0, -0.87153417),
    (lambda a, k: random.dirichlet(k, a, shape=())[0], np.float32([0.5, 2.0, 3.0]),
     [0.0268256, -0.00047154, -0.00072488]),
]


@pytest.mark.parametrize("k", range(len(SHAPE_GRADIENTS)))
def test_gamma_family_gradients_in_the_shape_are_jax_implicit_ones(k):
    f, a, want = SHAPE_GRADIENTS[k]
    got = astjax.grad(f)(jnp.asarray(a, jnp.float32), random.PRNGKey(1))
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-8)  # (as printed)


def _summed_gamma_draws(a, key):
    return jnp.sum(random.gamma(key, a, (3,)))


def _call_chains(source, entry, target):
    """How many chains of calls lead from function ``entry`` of generated python source to
    ``target``: the Numba backend inlines each into its own copy of ``target``."""
    import ast
    import functools
    calls = {f.name: [n.func.id for n in ast.walk(f) if isinstance(n, ast.Call) and
                      isinstance(n.func, ast.Name)]
             for f in ast.parse(source).body if isinstance(f, ast.FunctionDef)}

    @functools.cache
    def chains(name):
        return 1 if name == target else sum(chains(c) for c in calls.get(name, ()))
    return chains(entry)


def test_gamma_gradient_runs_the_sampler_once():
    """grad of gamma draws ran the Marsaglia-Tsang sampler three times: in the forward
    sweep (the custom_jvp rule's value), in the backward sweep (the rule again, for the
    tangent map) and for the unused value the rule's derivative returned; on Numba, which
    inlines each call, jit(grad(...)) compiled three copies of its two while loops (over
    400 s). Now once, as the draw alone; the values are JAX's (above)."""
    key, a = random.PRNGKey(1), jnp.float32(2.5)
    source = astjax.make_source(astjax.grad(_summed_gamma_draws))(a, key)
    assert _call_chains(source, "_summed_gamma_draws_grad", "_gamma_batch") == 1
    source = astjax.make_source(_summed_gamma_draws)(a, key)
    assert _call_chains(source, "_summed_gamma_draws", "_gamma_batch") == 1


def _summed_beta_draws(a, key):
    return jnp.sum(random.beta(key, a, 2.0, (3,)))


def test_beta_runs_the_gamma_sampler_once():
    # its two gamma draws are one batch: jit of beta compiled two copies of the rejection
    # loops (51 s against gamma's 19 s); the values and gradients are JAX's (above)
    key, a = random.PRNGKey(1), jnp.float32(1.5)
    source = astjax.make_source(_summed_beta_draws)(a, key)
    assert _call_chains(source, "_summed_beta_draws", "_gamma_batch") == 1
    source = astjax.make_source(astjax.grad(_summed_beta_draws))(a, key)
    assert _call_chains(source, "_summed_beta_draws_grad", "_gamma_batch") == 1
