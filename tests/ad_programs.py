"""Programs whose derivatives the AD tests check against finite differences."""
import functools
import types

import numpy as np

import astjax.numpy as jnp
from astjax import checkpoint, custom_jvp, custom_vjp, lax


def poly(x):
    return 3 * x ** 2 + 2 * x + 5


def sum_logistic(x):
    return jnp.sum(1.0 / (1.0 + jnp.exp(-x)))


def broadcasting(x, y):
    return jnp.sum(x / y + x * y ** 2)


def loop_for(x, n):
    y = x
    for i in range(n):
        y = jnp.sin(y) * 1.5 + i * 0.1
    return jnp.sum(y)


def loop_while(x):
    y = x
    k = 0
    while k < 4:
        y = y * 0.9 + jnp.cos(y)
        k += 1
    return jnp.sum(y * y)


def branches(x, a):
    if a > 0:
        z = x * x
    elif a < -1:
        z = jnp.exp(x)
    else:
        z = -x * 3.0
    return jnp.sum(z)


def value_branch(x):
    s = jnp.sum(x)
    if s > 0:
        return s * s
    return -s


def branch_changes_its_test(x):
    """The backward sweep takes each branch by the test's value on entry (it once read the
    value the branch left, False here, and differentiated the other branch)."""
    first = jnp.sum(x) > 0
    y = x
    for i in range(3):
        if first:
            first = False
            y = y * 2.0
        else:
            y = jnp.sin(y)
    once = jnp.sum(x) > 0
    if once:
        once = jnp.sum(y) > 100.0
        y = y * y
    return jnp.sum(y) + jnp.where(once, 1.0, 0.0)


def joined(x):
    """jnp.stack and jnp.concatenate of list displays; their VJP rules index with tuples
    built at run time (under vmap these were read as one fancy index)."""
    pair = jnp.stack([x, jnp.sin(x)], axis=-1)
    both = jnp.concatenate([x, x * x])
    return (jnp.sum(pair ** 2) + jnp.sum(jnp.stack([x * 2.0, x])[0] * both[::2])
            + jnp.sum(jnp.sin(jnp.stack([x, x * 2.0]))))


def overwritten_by_constant(x):
    """The cotangent gathered for each new y must not reach the y it replaces (it did for
    values made from constants, globals and ops with no derivative: wrong gradients)."""
    y = x * 2.0
    z = y * 1.0
    y = jnp.zeros(x.shape)
    y = y + x
    z = z + y * 3.0
    y = _OFFSETS
    y = y + x
    z = z + jnp.sin(y)
    y = jnp.ones_like(x)
    y = y + x
    z = z * y
    y = jnp.ones_like(z)
    return jnp.sum(y * x) + jnp.sum(z)


_OFFSETS = np.linspace(0.5, 1.0, 4)


def break_early(x, n):
    y = x
    for i in range(n):
        if i >= 3:
            break
        y = y * jnp.tanh(y) + 1.0
    return jnp.sum(y)


def reassign(x):
    x = x * 2.0
    x = jnp.sin(x) + x
    x = x * x
    return jnp.sum(x)


def _inner(v, w):
    return jnp.sum(jnp.tanh(v) * w)


def calls(x, y):
    return _inner(x, y) + _inner(y * 2.0, x)


def pytree_params(params, x):
    h = jnp.tanh(x * params["w"] + params["b"])
    return jnp.sum(h * h)


def tuple_args(wb, x):
    w, b = wb
    return jnp.sum(jnp.sin(w * x) + b)


def with_aux(x):
    y = jnp.sum(x * x)
    return y, x * 2.0


def vector_out(x):
    return jnp.sin(x) * x


def mlp_loss(w1, w2, x, y):
    h = jnp.tanh(jnp.dot(x, w1))
    logits = jnp.dot(h, w2)
    m = jnp.max(logits, axis=1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True)) + m
    return -jnp.mean(jnp.sum(y * (logits - lse), axis=1))


def inplace(x):
    y = jnp.zeros_like(x)
    y = y.at[0].set(x[1] * 2.0)
    y = y.at[1:].add(x[:-1] ** 2)
    return jnp.sum(y * x)


def numpy_style(x):
    y = np.sin(x) * np.exp(-x)
    return np.sum(y)


def _power_tower(x, n):
    if n <= 0:
        return x
    return jnp.sin(_power_tower(x, n - 1)) * 1.1


def recursive(x, n):
    return jnp.sum(_power_tower(x, n))


def stopped(x):
    return jnp.sum(x * lax.stop_gradient(x))


@custom_vjp
def clipped_grad_sin(x):
    return jnp.sin(x)


def _clip_fwd(x):
    return jnp.sin(x), jnp.cos(x)


def _clip_bwd(cos_x, g):
    return (jnp.clip(g * cos_x, -0.1, 0.1),)


clipped_grad_sin.defvjp(_clip_fwd, _clip_bwd)


def uses_custom_vjp(x):
    return jnp.sum(clipped_grad_sin(x) * 3.0)


@custom_jvp
def safe_log1pexp(x):
    return jnp.log1p(jnp.exp(x))


@safe_log1pexp.defjvp
def _safe_log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return safe_log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))


def uses_custom_jvp(x):
    return jnp.sum(safe_log1pexp(x) * x)


@custom_jvp
def square_with_flat_slope(x):
    """Right derivative, but its own derivative is 0 (the slope is held constant)."""
    return x * x


@square_with_flat_slope.defjvp
def _square_with_flat_slope_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * x, lax.stop_gradient(2.0 * x) * t


def _step(x):
    y = jnp.sin(x) * 0.9
    z = jnp.tanh(y) + x * 0.1
    return z * jnp.cos(z)


_step_checkpointed = checkpoint(_step)


def inline_loop(x, n):
    for i in range(n):
        y = jnp.sin(x) * 0.9
        z = jnp.tanh(y) + x * 0.1
        x = z * jnp.cos(z)
    return jnp.sum(x)


def checkpointed_loop(x, n):
    for i in range(n):
        x = _step_checkpointed(x)
    return jnp.sum(x)


def nested_loops(x, n):
    for i in range(n):
        for j in range(i + 1):  # the inner trip count differs on every outer trip
            x = jnp.sin(x) * 1.1 + j * 0.01
    return jnp.sum(x)


def _segment(x, k):
    for i in range(k):
        x = _step_checkpointed(x)
    return x


_segment_checkpointed = checkpoint(_segment)


def segmented_loop(x, n, k):
    for j in range(n // k):
        x = _segment_checkpointed(x, k)
    return jnp.sum(x)


def appended_then_stacked(x):
    rows = []
    for i in range(3):
        rows.append(jnp.sin(x) * (i + 1.0))
    a = jnp.array(rows)              # (3, n)
    b = jnp.stack(rows, axis=1)      # (n, 3): the list is read twice
    return jnp.sum(a ** 2) + jnp.sum(b * jnp.arange(3.0))


def scalar_accumulator(x, n):
    acc = 0.0  # becomes an array on the first trip: the loop is peeled (ir/peel.py)
    for i in range(n):
        acc = acc + jnp.sin(x) * i
    return jnp.sum(acc * acc)


def fill_then_reshape(x):
    y = jnp.zeros(x.shape[0])
    for i in range(x.shape[0]):  # y.at[i].set tapes no old y ...
        y = y.at[i].set(jnp.sin(x[i]) * 2.0)
    y = jnp.reshape(y, (-1, 1)) * jnp.ones((1, 3))  # ... and y changes rank afterwards
    return jnp.sum(y * y)


def mlp_over_a_list_of_layers(params, x):
    for w, b in params[:-1]:  # a loop over a tuple slice: the layer is indexed at run time
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]         # a negative static index
    return jnp.sum((x @ w + b) ** 2)


def last_of_a_tuple(t):
    return jnp.sum(t[-1] * t[0])


def loop_over_a_list_display(x):
    s = 0.0
    for v in [x, x * 2.0, jnp.sin(x)]:
        s = s + jnp.sum(jnp.cos(v) * v)
    return s


def _mixed_rank_body(i, carry):
    a, b = carry
    return a + jnp.sum(jnp.sin(b)), b * a


def fori_loop_mixed_rank_carry(x):
    a, b = lax.fori_loop(0, 3, _mixed_rank_body, (0.0, x))  # (scalar, vector)
    return a + jnp.sum(b)


# --- calls whose callee's forward sweep the caller runs (reverse.split_vjp_functions) -------------

def two_layer(params, x, scale=1.0):
    w1, b1, w2, b2 = params
    h = jnp.tanh(x @ w1 + b1)
    x = h @ w2 + b2  # a reassigned parameter: the backward sweep reads its new value
    return scale * x


def loss_of_a_model(params, x):
    y = two_layer(params, x=x)
    z = two_layer(params, y @ params[0][:2, :3], 0.5)
    return jnp.sum(jnp.sin(y) ** 2) + jnp.sum(z * y)


def layers_in_a_loop(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x


def loss_of_a_looping_model(params, x):
    return jnp.sum(layers_in_a_loop(params, x) ** 2)


# --- keyword-only and positional-only parameters ---------------------------------------------------

def keyword_only(x, *, scale=2.0, shift):
    return jnp.sum(jnp.sin(x) * scale + shift)


def positional_only(x, y, /, z=1.0):
    return jnp.sum(x * jnp.cos(y) + z)


def calls_with_keywords(x):
    return keyword_only(x, shift=1.0) + keyword_only(x, scale=0.5, shift=x[0]) + \
        positional_only(x, x * 2.0)


def calls_a_keyword_only_parameter_positionally(x):
    return keyword_only(x, 3.0, 1.0)


# --- lists built with append, then read by index ---------------------------------------------------

def rnn_over_a_list(x):
    hs = []
    hs.append(x)
    for i in range(3):
        hs.append(jnp.tanh(hs[-1] * 1.5 + hs[0] * 0.1))  # reads while it grows
    total = jnp.sum(jnp.stack(hs)) + jnp.sum(hs[2])
    for h in hs:
        total = total + jnp.sum(h * h)
    return total


def stacked_after_reads_by_index(x):
    """The stack's adjoint runs first in the backward sweep, before the adjoints of the
    reads (``hs[0]``) that keep the list's cotangent list (it was once appended after that
    list's zeros, and hs[0]'s cotangent went to a zero that nothing popped)."""
    hs = [x]
    for i in range(3):
        hs.append(jnp.sin(hs[-1]) * hs[0])
    return jnp.sum(jnp.stack(hs, axis=1) ** 2)


def concatenated_lists(x):
    """Elements of different lengths along the joining axis, joined twice: once while the
    list grows, once at the end (and read by index)."""
    hs = [x]
    for i in range(2):
        hs.append(jnp.cos(hs[-1][:, :i + 1]) * hs[0][:, :1])
    joined = jnp.concatenate(hs, axis=-1)
    hs.append(joined[:, :2] * 3.0)
    flat = jnp.concatenate(hs, axis=None)
    return jnp.sum(jnp.concatenate(hs, axis=1) ** 3) + jnp.sum(hs[1]) + jnp.sum(flat[::2] ** 2)


def pairs_in_a_list(x):
    ps = []
    for i in range(3):
        ps.append((x * i, jnp.sum(x) * i))
    total = 0.0
    for a, b in ps:
        total = total + jnp.sum(a * b)
    for i in range(len(ps)):
        total = total + jnp.sum(ps[i][0] * ps[-1 - i][1])
    return total


def list_made_in_a_loop(x):
    total = 0.0
    for j in range(2):
        outs = []
        outs.append(x * j)
        total = total + jnp.sum(outs[0] * outs[-1])  # (a negative index: ad.analysis)
    return total


def lists_made_in_nested_loops(x):
    """A list made afresh each trip of the outer loop, grown by the inner one, read by
    index, stacked, and its last element carried to the next trip."""
    total = 0.0
    h = x
    for j in range(3):
        outs = [h]
        for i in range(2):
            outs.append(jnp.sin(outs[-1]) * outs[0])
        total = total + jnp.sum(jnp.stack(outs) ** 2) + jnp.sum(outs[1])
        h = outs[-1] * 0.5
    return total + jnp.sum(h)


def list_made_in_a_branch(x, n):
    """Made once on every path (its cotangent list starts from the list as it is left)."""
    if jnp.sum(x) > 0:
        hs = [x, x * 3.0]
    elif n > 2:
        hs = [jnp.cos(x)]
    else:
        hs = []
        hs.append(x * x)
    for i in range(n):
        hs.append(jnp.sin(hs[-1]) * hs[0])
    return jnp.sum(jnp.stack(hs) ** 2) + jnp.sum(hs[1] * hs[-1])


def list_made_twice(x):
    hs = [x]
    if jnp.sum(x) > 0:
        hs = [x * 2.0]
    hs.append(jnp.sin(x))
    return jnp.sum(hs[0] * hs[1])


def list_rebuilt_in_a_loop(x):
    """Made again each trip from the last trip's list, and read after the loop."""
    hs = [x]
    for i in range(3):
        hs = [hs[-1] * 2.0]
        hs.append(jnp.sin(hs[-1]))
    return jnp.sum(hs[-1])


def list_extended_with_its_items(x):
    """``[*hs, y]``: the old list's items are copied before the name takes the new one."""
    hs = [x]
    for i in range(2):
        hs = [*hs, jnp.sin(hs[-1])]
    hs.append(x)
    return jnp.sum(jnp.stack(hs) ** 2) + jnp.sum(hs[1])


def list_remade_in_loops_and_branches(x, n):
    hs = [x * 1.0]
    total = 0.0
    for j in range(2):
        for i in range(n):
            if i % 2 == 0:
                hs = [hs[-1] * 2.0, jnp.sin(x)]
            hs.append(jnp.tanh(hs[-1] + hs[0]))
        total = total + jnp.sum(hs[0] * x)
    return total + jnp.sum(jnp.stack(hs))


def unstacked_pair(x):
    """In compiled code jnp.unstack returns a list of run-time length."""
    a, b = jnp.unstack(x)
    return jnp.sum(a * jnp.sin(b))


def loop_over_unstacked(x):
    total = 0.0
    for r in jnp.unstack(x):
        total = total + jnp.sum(jnp.sin(r) * r)
    return total


def unstacked_columns(x):
    cols = jnp.unstack(x, axis=1)
    total = 0.0
    for i in range(len(cols)):
        total = total + jnp.sum(cols[i] * cols[0])
    return total + jnp.sum(jnp.stack(cols) ** 3)


def list_made_in_a_loop_only(x, n):
    for i in range(n):
        hs = [x * i]
        hs.append(jnp.sin(hs[0]))
    return jnp.sum(hs[-1])


def list_display_then_appended(x):
    """The NumPy habit: a list display grown by append, read from its end."""
    acts = [x]
    for k in range(3):
        acts.append(jnp.tanh(acts[-1] * (0.5 + k)))
    return jnp.sum(acts[-1] ** 2) + jnp.sum(acts[1] * acts[0])


def _sum_of_squares(hs):
    s = 0.0
    for h in hs:
        s = s + jnp.sum(h ** 2)
    return s


def list_passed_to_a_call(x):
    hs = []
    for i in range(3):
        hs.append(jnp.sin(x * i))
    return _sum_of_squares(hs)


def _grow(hs, x):
    hs.append(x)
    return jnp.sum(hs[0])


def list_argument_appended_to(x):
    hs = []
    hs.append(x * 2.0)
    return _grow(hs, x)


def _push(hs, x):
    hs.append(jnp.tanh(x))


def _push_twice(hs, x):
    """Passes the list on to a callee that appends, pops from it, and reads it."""
    _push(hs, x * hs[0])
    top = hs.pop()
    hs.append(top * 2.0)
    hs.append(jnp.sin(hs[-1]))
    return jnp.sum(hs[-2])


def _last_squared(hs):
    return jnp.sum(hs[-1] ** 2)


def list_passed_in_the_loop_growing_it(x):
    """The callee's derivative needs the list as the call found it (shorter)."""
    hs = [x]
    total = 0.0
    for i in range(3):
        hs.append(jnp.sin(hs[-1]))
        total = total + _last_squared(hs) + _sum_of_squares(hs) * hs[-2][0]
    return total


def _pop_and_push(hs, x):
    a = hs.pop()
    hs.append(a * x)
    hs.append(jnp.sin(a))


def list_display_grown_by_callees(x):
    """``hs = [x]`` appended to and popped from only by callees: still a list built at run
    time (a display of one element, not a sequence of fixed length)."""
    hs = [x]
    for i in range(2):
        _push(hs, hs[-1] * 1.5)
    for i in range(2):
        _pop_and_push(hs, x + i)
    return jnp.sum(jnp.stack(hs) ** 2)


def list_display_grown_by_a_callee_in_a_while_loop(x):
    hs = [x]
    i = 0
    while i < 3:
        _pop_and_push(hs, x + i)
        i = i + 1
    return jnp.sum(jnp.stack(hs) ** 2)


def lists_made_in_one_assignment(x):
    """``hs, gs = [x], [...]``: both displays are lists built at run time."""
    hs, gs = [x], [x * 2.0]
    for i in range(3):
        hs.append(jnp.sin(hs[-1]))
        gs.append(gs[-1] * hs[-1])
    s = 0.0
    for h, g in zip(hs, gs):
        s = s + jnp.sum(h * g)
    return s


def list_appended_to_by_callees(x):
    hs = [x]
    for i in range(3):
        _push(hs, hs[-1] * 1.5)
    total = _push_twice(hs, hs[1])
    hs.append(x * 0.5)
    return jnp.sum(hs[-2] * hs[0]) + jnp.sum(jnp.stack(hs) ** 2) + total


def list_popped(x):
    """``hs.pop()`` as a statement, and a pop whose value is read: each pop's cotangent
    goes back on the list's cotangent list (a discarded one, as zeros)."""
    hs = [x]
    for i in range(3):
        hs.append(x * hs[-1] + i)
    last = hs[-1]
    hs.pop()
    hs.append(jnp.sin(x))
    top = hs.pop()
    return jnp.sum(last) + jnp.sum(jnp.stack(hs) ** 2) + jnp.sum(hs[-1] * top)


def list_sliced(x):
    hs = []
    for i in range(3):
        hs.append(jnp.sin(x * i))
    return jnp.sum(jnp.stack(hs[1:]))


def list_slices_read_and_extended(x, n):
    """Slices (bounds from either end, one at run time) read by index, stacked, joined
    and appended to."""
    hs = [x]
    for i in range(3):
        hs.append(jnp.sin(hs[-1]) * hs[0])
    a = hs[1:]
    b = hs[:-1]
    tail = hs[-2:]
    tail.append(x * 2.0)
    return (jnp.sum(jnp.stack(a) ** 2) + jnp.sum(jnp.stack(b) * 3.0) + jnp.sum(a[0] * b[-1])
            + jnp.sum(jnp.concatenate(hs[1:n]) ** 3) + jnp.sum(jnp.stack(tail) ** 2))


def list_sliced_with_steps(x, a, b, c):
    """Steps of either sign, from constants and from run-time ints (Python's rules for
    negative and out-of-range bounds)."""
    hs = []
    for i in range(5):
        hs.append(jnp.sin(x * (i + 1.0)))
    every_other = hs[::2]
    return (jnp.sum(jnp.stack(hs[a:b:c]) ** 2) + jnp.sum(jnp.stack(every_other) * 3.0)
            + jnp.sum(jnp.stack(hs[::-1])[0] * every_other[-1])
            + jnp.sum(jnp.stack(hs[3:0:-2]) ** 3))


# --- real-valued functions of complex inputs (JAX's convention: grad = df/dx - i df/dy) ---------

def complex_abs_squared(z):
    return jnp.sum(jnp.abs(z) ** 2)


def complex_mean_abs(z):
    return jnp.mean(jnp.abs(z * 2.0))


def complex_imag_exp(z):
    return jnp.sum(jnp.imag(jnp.exp(z)))


def complex_conj_product(z):
    return jnp.sum(jnp.real(jnp.conj(z) * z * (1 + 2j)))


def complex_imag_log_and_reciprocal(z):
    return jnp.sum(jnp.imag(jnp.log(z)) + jnp.real(1.0 / z) * jnp.abs(z))


def complex_real_of_holomorphic(z):
    return jnp.sum(jnp.real(jnp.sin(z) / (z + 2.0) + z ** 3))


COMPLEX_FUNCTIONS = [complex_abs_squared, complex_mean_abs, complex_imag_exp,
                     complex_conj_product, complex_imag_log_and_reciprocal,
                     complex_real_of_holomorphic]


def holomorphic_vector(z):
    return z ** 3 * jnp.sum(z) + jnp.sin(z) / (z + 2.0)


def holomorphic_scalar(z):
    return jnp.sum(jnp.tanh(z) * z)


def scaled_by_integers(x, n):
    return jnp.sum(jnp.sin(x) * n)


def complex_to_real_vector(z):
    return jnp.abs(z) ** 2 + jnp.real(z * z[0]) + jnp.imag(jnp.exp(z)) * jnp.sum(jnp.abs(z))


def real_to_complex_pair(x, n):
    """A complex and a real output of real (and integer) inputs."""
    return jnp.exp(1j * x) * jnp.sum(x ** 2 * n), jnp.sin(x) * x[0]


def list_remade(x):
    """A list made again outside control flow is a new list from there on."""
    xs = [x]
    xs.append(jnp.sin(x))
    a = xs[1] * xs[0]
    xs = [2.0 * xs[1]]
    xs.append(jnp.cos(x))
    return jnp.sum(a * (xs[1] + xs[0]))


@custom_jvp
def scaled(x, y):
    return x * y


@scaled.defjvp
def _scaled_jvp(primals, tangents):
    x, y = primals
    tx, ty = tangents
    return x * y, tx * y + x * ty


def scaled_by_a_constant(x):
    """A constant argument's tangent reaches the rule as zeros (as in JAX), not None."""
    return jnp.sum(scaled(x, 3.0) * x)


@custom_jvp
def sin_with_rule_of_its_own(x):
    return jnp.sin(x)


@sin_with_rule_of_its_own.defjvp
def _sin_with_rule_of_its_own_jvp(primals, tangents):
    """Not sin's derivative: what differentiates the rule again tells (JAX: as written)."""
    (x,), (t,) = primals, tangents
    return jnp.sin(x), 2.0 * x * t


def times_custom_jvp_value(x):
    return jnp.sum(sin_with_rule_of_its_own(x) * x)


@custom_vjp
def sin_with_fwd_of_its_own(x):
    return jnp.sin(x)


def _exp_fwd(x):
    return jnp.exp(x), x


def _cube_bwd(x, g):
    return (g * x * x,)


sin_with_fwd_of_its_own.defvjp(_exp_fwd, _cube_bwd)


def times_custom_vjp_value(x):
    return jnp.sum(sin_with_fwd_of_its_own(x) * x)


def accumulator_skips_its_first_trip(x, n):
    acc = 0.0  # an array from the second trip on
    for i in range(n):
        if i == 0:
            continue
        acc = acc + x * i
    return jnp.sum(acc)


@functools.partial(custom_jvp, nondiff_argnums=(0, 2))
def applied_and_scaled(f, x, k):
    return f(x) * k


@applied_and_scaled.defjvp
def _applied_and_scaled_jvp(f, k, primals, tangents):
    """JAX's order: the nondiff arguments, then the others' primals and tangents."""
    (x,), (t,) = primals, tangents
    return f(x) * k, 10.0 * k * t  # not f's slope: the rule is what runs


def uses_nondiff_argnums(x):
    return jnp.sum(applied_and_scaled(jnp.sin, x, 2.0) * x)


def overwritten_without_being_read(x, n):
    """Each trip overwrites y (and z, on the trips it does not skip) without reading it:
    their cotangents are arrays when the backward loop starts and 0.0 after a trip; x's
    is 0.0 where it starts and an array after one."""
    y = x * 2.0
    z = x * 3.0
    for i in range(n):
        y = jnp.sin(x) * i
        if i == 1:
            continue
        z = jnp.cos(x) * i
    return jnp.sum(y * z)


def read_or_overwritten_in_one_branch(x):
    y = x * 2.0
    v = x * 4.0
    if jnp.sum(x) > 0:
        w = y * 3.0  # y's cotangent: 0.0 until this arm, the only one reading y
        v = jnp.cos(x)  # v's: reset to 0.0 in this arm only
    else:
        w = x
    return jnp.sum(v * w)


def set_by_every_trip(x, n):
    for i in range(n):
        y = jnp.sin(x) * i  # y's cotangent: an array for the last trip only
    return jnp.sum(y * x)


# arrays read from outside that promote to the input's dtype (JAX's autodiff cookbook
# multiplies by a global bool array of targets)
CAPTURED_MASK = jnp.array([True, False, True])
CAPTURED = types.SimpleNamespace(counts=jnp.array([1, 2, 3]))


def reads_captured_arrays_that_promote(w):
    return jnp.sum(jnp.sin(w) * CAPTURED_MASK + w * CAPTURED.counts)


@custom_jvp
def twice_exp(x):
    return 2.0 * jnp.exp(x)


@twice_exp.defjvp
def _twice_exp_jvp(primals, tangents):
    # the tangent reads the rule's own call of the function (and is not its derivative,
    # so the answers tell): reverse mode must not differentiate that call
    x, = primals
    t, = tangents
    ans = twice_exp(x)
    return ans, ans * jnp.sin(x) * t


@custom_jvp
def x_squared_y(x, y):
    return x ** 2 * y


# one rule per argument (JAX's defjvps), not the derivative, so the answers tell
x_squared_y.defjvps(lambda x_dot, out, x, y: 3.0 * x * y * x_dot,
                    lambda y_dot, out, x, y: out * y_dot)


@custom_jvp
def x_squared_y_fixed_y(x, y):
    return x ** 2 * y


x_squared_y_fixed_y.defjvps(lambda x_dot, out, x, y: 2.0 * x * y * x_dot, None)


@custom_jvp
def sin_and_identity(x):
    return {"a": jnp.sin(x), "b": x}


sin_and_identity.defjvps(lambda t, out, x: {"a": jnp.cos(x) * t, "b": 2.0 * t})


def apply_to(f, x):
    return f(x)


def cube(x):
    return x ** 3


# parameters named like the generated rule code's own variables (g, r, t_x)
@custom_vjp
def product_of_g_and_r(g, r):
    return g * r


def _product_fwd(g, r):
    return g * r, (g, r)


def _product_bwd(res, ct):
    g, r = res
    return (2.0 * ct * r, ct * g)  # not the derivative, so the answer tells


product_of_g_and_r.defvjp(_product_fwd, _product_bwd)


@custom_jvp
def sum_of_x_and_t_x(x, t_x):
    return x + t_x


@sum_of_x_and_t_x.defjvp
def _sum_of_x_and_t_x_jvp(primals, tangents):
    return sum_of_x_and_t_x(primals[0], primals[1]), 3.0 * tangents[0] + tangents[1]


@custom_jvp
def scaled_sin(x, k=3.0):
    return jnp.sin(x) * k


@scaled_sin.defjvp
def _scaled_sin_jvp(primals, tangents):
    x, k = primals
    return scaled_sin(x, k), tangents[0] * jnp.cos(x) * k


@custom_vjp
def scaled_sin_vjp(x, k=2.0):
    return jnp.sin(x) * k


def _scaled_sin_fwd(x, k=2.0):
    return scaled_sin_vjp(x, k), (x, k)


def _scaled_sin_bwd(res, g):
    x, k = res
    return g * jnp.cos(x) * k, 0.0


scaled_sin_vjp.defvjp(_scaled_sin_fwd, _scaled_sin_bwd)


def calls_custom_rules_with_defaults(x):
    return jnp.sum(scaled_sin(x)) + jnp.sum(scaled_sin_vjp(x))
