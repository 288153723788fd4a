"""Programs astjax must reject with a located error. Line numbers are asserted by search."""
import numpy as np

import astjax
import astjax.numpy as jnp

COUNTER = 0


def uses_try(x):
    try:  # MARK try
        return x
    except ValueError:
        return x


def uses_global(x):
    global COUNTER  # MARK global
    return x


def uses_generator(x):
    yield x  # MARK yield


def uses_with(x):
    with open("f"):  # MARK with
        return x


def array_condition(x):
    if x > 0:  # MARK truth
        return x
    return -x


def rank_changes(x, n):
    y = 0
    for i in range(n):
        y = jnp.ones((2, 2)) if i > 0 else x  # MARK rank
    return y


def undefined_name(x):
    return x + not_defined_anywhere  # noqa: F821  MARK undefined


def bad_matmul(x):
    return x @ 2.0  # MARK matmul


def unknown_method(x):
    return x.frobnicate()  # MARK method


def calls_numpy_random(x):
    return x + np.random.rand(3)  # MARK call


RNG = np.random.default_rng(0)


def calls_a_generator(x):
    return x + RNG.normal(size=3)  # MARK generator


def runtime_broadcast(x, y):
    z = x * 2.0
    return z + y  # MARK runtime


def list_index(x):
    return x[[0, -1]]  # MARK list-index


def bad_product(a, b):
    c = a * 2.0
    return c @ b  # MARK product


def select_of_unequal_lists(x):
    return jnp.select([x < 0], [x, x])  # MARK select


def float_indices(x):
    return jnp.take_along_axis(x, x, 0)  # MARK take-along


def jvp_with_two_primals(x):
    return astjax.jvp(lambda y: jnp.sin(y), (x, x), (x, x))[1]  # MARK jvp-primals


def run_time_pad_width(x):
    return jnp.pad(x, x.shape[0])  # MARK pad-width
