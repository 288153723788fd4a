"""Python list operations inside differentiated functions, as JAX (which traces Python
lists) differentiates them: pop at an index, item assignment, extend and +=, builtin sum,
lists of pairs passed to helpers, a list filled by a callee. Checked against finite
differences (check_grads: jvp and vjp) and closed forms."""
import inspect

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import grad
from astjax._src.errors import TypeCheckError, UnsupportedSyntaxError
from astjax.test_util import check_grads

X = np.array([0.3, 0.7, -0.4])


# --- pop at an index ---------------------------------------------------------------------
def pop_front_and_back(x):
    hs = [x, jnp.sin(x), x * 2.0]
    a = hs.pop(0)
    b = hs.pop()
    return jnp.sum(a * b + hs[0])


def pop_from_a_list_built_in_a_loop(x):
    hs = []
    for i in range(3):
        hs.append(x * (i + 1.0))
    a = hs.pop(0)
    b = hs.pop()
    return jnp.sum(a * b)


def pop_only(x):
    """Nothing reads the list by index: its cotangent list still starts one per element."""
    hs = []
    for i in range(3):
        hs.append(x * (i + 1.0))
    a = hs.pop()
    return jnp.sum(a * x)


def pop_at_a_loop_index_in_an_expression(x):
    hs = [x]
    for i in range(3):
        hs += [jnp.cos(hs[-1]) * x]
    t = 0.0
    for i in range(2):
        t = t + jnp.sum(hs.pop(i + 1) * x)
    return t + jnp.sum(jnp.stack(hs))


def pop_front_in_a_callee(lst):
    return lst.pop(0)


def extend_in_a_callee(lst, a):
    lst.extend([a, a * 2.0])


def queue_through_callees(x):
    hs = [x]
    for i in range(3):
        extend_in_a_callee(hs, jnp.sin(hs[-1]))
        h = pop_front_in_a_callee(hs)
        hs += [h * x]
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 8.0)[:, None])


def pop_after_slicing(x):
    """``hs = hs[1:]`` makes the list again under the same name."""
    hs = []
    for i in range(3):
        hs.append(x * (i + 1.0))
    hs = hs[1:]
    b = hs.pop()
    return jnp.sum(b * hs[0])


def pop_past_the_end(x):
    hs = [x, x * 2.0]
    return jnp.sum(hs.pop(2))


def item_assigned_past_the_end(x, i):
    hs = [x, x * 2.0]
    hs[i] = x
    return jnp.sum(hs[0])


def test_pop_at_an_index(x64):
    x = X
    # a = x, b = 2x, hs[0] = sin x;  a = x, b = 3x;  a = 3x
    np.testing.assert_allclose(grad(pop_front_and_back)(x), 4 * x + np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(grad(pop_from_a_list_built_in_a_loop)(x), 6 * x, rtol=1e-6)
    np.testing.assert_allclose(grad(pop_only)(x), 6 * x, rtol=1e-6)
    np.testing.assert_allclose(grad(pop_after_slicing)(x), 12 * x, rtol=1e-6)
    for fn in (pop_front_and_back, pop_from_a_list_built_in_a_loop, pop_only,
               pop_after_slicing, pop_at_a_loop_index_in_an_expression,
               queue_through_callees):
        check_grads(fn, (x,), order=1)
    # an index past the end is an IndexError at the user's line (it popped the last one)
    for fn, args in [(pop_past_the_end, (x,)), (item_assigned_past_the_end, (x, 2))]:
        for transformed in (astjax.jit(fn), grad(fn)):
            with pytest.raises(IndexError, match=r"test_grad_lists.py:\d+: pop from empty"):
                transformed(*args)


# --- item assignment -----------------------------------------------------------------------
def item_assigned_at_loop_indices(x):
    hs = [x, x * 2.0, x * 3.0]
    hs[1] = jnp.sin(x)
    for i in range(3):
        hs[i] = hs[i] * x
    return jnp.sum(jnp.stack(hs))


def item_assigned_in_a_list_of_different_shapes(x):
    params = [jnp.outer(x, x), x]
    params[0] = params[0] * 2.0
    params[-1] = jnp.sin(params[-1])
    return jnp.sum(params[0] @ params[1])


def item_updated_from_both_ends(x):
    hs = [x, x * 2.0, x * 3.0]
    for i in range(3):
        hs[i] += jnp.sin(x) * i
        hs[-1 - i] = hs[-1 - i] * x
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 4.0)[:, None])


def item_assigned_in_a_list_argument(params, x):
    params[0] = params[0] * x
    params[-1] = jnp.sin(params[-1])
    return jnp.sum(params[0] * params[1])


def slices_assigned_in_a_list_argument(params, x):
    params[1:] = [x, params[1] * 2.0]
    params[:-2] = (jnp.sin(params[0]),)
    return jnp.sum(params[0] * params[1]) + jnp.sum(params[2])


def test_item_assignment(x64):
    x = X
    np.testing.assert_allclose(grad(item_assigned_at_loop_indices)(x),
                               8 * x + np.sin(x) + x * np.cos(x), rtol=1e-6)
    for fn in (item_assigned_at_loop_indices, item_assigned_in_a_list_of_different_shapes,
               item_updated_from_both_ends):
        check_grads(fn, (x,), order=1)
    params = [x * 2.0, x + 1.0]
    g = grad(item_assigned_in_a_list_argument, argnums=(0, 1))(params, x)
    np.testing.assert_allclose(g[0][0], x * np.sin(x + 1.0), rtol=1e-12)
    np.testing.assert_allclose(g[0][1], 2 * x * x * np.cos(x + 1.0), rtol=1e-12)
    np.testing.assert_allclose(g[1], 2 * x * np.sin(x + 1.0), rtol=1e-12)
    check_grads(item_assigned_in_a_list_argument, (params, x), order=1)
    # a slice: [sin p0, x, 2 p1]
    np.testing.assert_allclose(astjax.jit(slices_assigned_in_a_list_argument)(params, x),
                               _python_values(slices_assigned_in_a_list_argument,
                                              list(params), x), rtol=1e-12)
    g = grad(slices_assigned_in_a_list_argument, argnums=(0, 1))(params, x)
    np.testing.assert_allclose(g[0][0], x * np.cos(params[0]), rtol=1e-12)
    np.testing.assert_allclose(g[0][1], 2 + 0 * x, rtol=1e-12)
    np.testing.assert_allclose(g[1], np.sin(params[0]), rtol=1e-12)
    check_grads(slices_assigned_in_a_list_argument, (params, x), order=1)


# --- extend and += ------------------------------------------------------------------------
def extended_and_added_to(x):
    hs = [x]
    hs += [jnp.sin(x), x * 2.0]
    hs.extend([x * x, jnp.cos(x)])
    return jnp.sum(jnp.stack(hs) * jnp.arange(5.0)[:, None])


def extended_by_a_comprehension_and_a_tuple(x):
    hs = [x * k for k in range(2)]
    hs.extend([jnp.sin(h) for h in hs])
    hs.extend((x, x))
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 7.0)[:, None])


def test_extend_and_plus_equals(x64):
    x = X
    np.testing.assert_allclose(grad(extended_and_added_to)(x),
                               np.cos(x) + 4 + 6 * x - 4 * np.sin(x), rtol=1e-6)
    for fn in (extended_and_added_to, extended_by_a_comprehension_and_a_tuple):
        check_grads(fn, (x,), order=1)


# --- builtin sum -------------------------------------------------------------------------
def summed_list(x):
    hs = []
    for i in range(3):
        hs.append(x * (i + 1.0))
    return jnp.sum(sum(hs) * x)


def summed_list_with_a_start(x):
    hs = [jnp.sin(x * k) for k in range(1, 3)]
    return jnp.sum(sum(hs, x) ** 2)


def summed_when_empty(x, n):
    hs = []
    for i in range(n):
        hs.append(x * i)
    return jnp.sum(sum(hs) + x)


def test_builtin_sum_of_a_list(x64):
    x = X
    np.testing.assert_allclose(grad(summed_list)(x), 12 * x, rtol=1e-6)
    for fn in (summed_list, summed_list_with_a_start):
        check_grads(fn, (x,), order=1)
    # empty only at run time: Python's 0 has no shape astjax could give it; the first
    # element's read fails at the sum's line (it named the def's)
    line = inspect.getsourcelines(summed_when_empty)[1] + 4
    np.testing.assert_allclose(astjax.jit(summed_when_empty)(x, 2),
                               summed_when_empty(x, 2), rtol=1e-12)
    for transformed in (astjax.jit(summed_when_empty), grad(summed_when_empty)):
        with pytest.raises(IndexError, match=rf"test_grad_lists.py:{line}: list index out"):
            transformed(x, 0)


# --- insert, del, slice assignment, a list as a condition ----------------------------------
def inserted_into(x, i):
    hs = [x, x * 2.0]
    hs.insert(1, jnp.sin(x))
    hs.insert(-9, x * x)  # (clamped to the front, as Python does; past the end: appended)
    hs.insert(i, jnp.cos(x))
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 6.0)[:, None])


def inserted_at_the_front_in_a_loop(x):
    hs = []
    for i in range(3):
        hs.insert(0, x * (i + 1.0))
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 4.0)[:, None])


def put_front(lst, v):
    lst.insert(0, v)


def inserted_by_a_callee(x):
    hs = [x, x * 2.0]
    put_front(hs, jnp.sin(x))
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 4.0)[:, None])


def deleted_from(x, i):
    hs = [x, jnp.sin(x), x * 2.0, x * x]
    del hs[1]
    del hs[i]
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 3.0)[:, None])


def popped_while_not_empty(x):
    hs = [x, x * 2.0, jnp.sin(x)]
    t = 0.0
    while hs:
        t = t * 0.5 + jnp.sum(hs.pop() * x)
    return t if not hs else t * 0.0


def slices_assigned(x):
    hs = [x, x * 2.0, x * 3.0, x * 4.0]
    hs[1:3] = [jnp.sin(x)]  # shorter
    hs[-1:] = [x * x, jnp.cos(x)]  # longer, from the end
    hs[:0] = [hs[0] * 3.0]  # at the front, reading the list
    del hs[3:]
    return jnp.sum(jnp.stack(hs) * jnp.arange(1.0, 4.0)[:, None])


def cleared(x):
    hs = [x, x * 2.0]
    hs.clear()
    hs.append(jnp.sin(x))
    return jnp.sum(hs[0]) + len(hs)


def removed_by_value(x):
    hs = [x, x * 2.0]
    hs.remove(hs[0])
    return jnp.sum(hs[0])


def first_if_any(lst):
    if lst:
        return lst[0]
    return lst[1]


def condition_in_a_callee(x):
    hs = []
    for i in range(2):
        hs.append(x * i)
    return jnp.sum(first_if_any(hs))


def empty_sums(x):
    hs = []
    return jnp.sum(sum(hs) + x) + sum([], 2.0)


def _python_values(fn, *args):
    """fn run as plain Python on NumPy arrays (jnp's functions take them eagerly)."""
    return float(fn(*args))


def test_insert_del_slice_assignment_and_truth(x64):
    x = X
    for fn, args in [(inserted_into, (x, 3)), (inserted_into, (x, -1)),
                     (inserted_into, (x, 7)), (inserted_at_the_front_in_a_loop, (x,)),
                     (inserted_by_a_callee, (x,)),
                     (deleted_from, (x, 0)), (deleted_from, (x, -1)),
                     (popped_while_not_empty, (x,)), (slices_assigned, (x,)),
                     (cleared, (x,)), (empty_sums, (x,))]:
        np.testing.assert_allclose(astjax.jit(fn)(*args), _python_values(fn, *args),
                                   rtol=1e-12)
        check_grads(lambda x: fn(x, *args[1:]), (x,), order=1)
    # hs = [x*x, x, sin x, 2x] and cos x inserted at 3: 1*x^2 + 2x + 3 sin x + 4 cos x + 10x
    np.testing.assert_allclose(grad(inserted_into)(x, 3),
                               2 * x + 2 + 3 * np.cos(x) - 4 * np.sin(x) + 10, rtol=1e-12)
    # [2x, x * x] and [x, 2x], weighted 1 and 2
    np.testing.assert_allclose(grad(deleted_from)(x, 0), 2 + 4 * x, rtol=1e-12)
    np.testing.assert_allclose(grad(deleted_from)(x, -1), 5 + 0 * x, rtol=1e-12)
    # [3x, x, sin x]
    np.testing.assert_allclose(grad(slices_assigned)(x), 5 + 3 * np.cos(x), rtol=1e-12)
    np.testing.assert_allclose(grad(empty_sums)(x), np.ones_like(x), rtol=1e-12)
    # by value: == on arrays is elementwise (JAX's lists match the very same object only)
    with pytest.raises(TypeCheckError, match=r"test_grad_lists.py:\d+:\d+: astjax cannot "
                       r"compile list.remove\(\) here: .*\(del xs\[i\] or xs.pop\(i\)\)"):
        grad(removed_by_value)(x)
    # a list argument as a condition, in a callee that does not change it
    with pytest.raises(TypeCheckError, match=r"test_grad_lists.py:\d+:\d+: cannot use a "
                       r"list\[f64\[_\]\] as a condition here .*: write len\(xs\) > 0"):
        astjax.jit(condition_in_a_callee)(x)
    # del of an array's element (JAX: arrays do not support item deletion)
    with pytest.raises(UnsupportedSyntaxError, match=r"test_grad_lists.py:\d+:\d+: astjax "
                       "cannot compile del here"):
        astjax.jit(deleting_an_array_element)(x)


def deleting_an_array_element(x):
    y = x * 2.0
    del y[0]
    return y


# --- a list argument, copied and changed ------------------------------------------------------
def changed_after_copying(ps, x):
    qs = list(ps)
    del qs[0]
    qs.insert(0, x)
    rs = qs.copy()
    rs.append(x * 3.0)
    return jnp.sum(qs[0] * qs[1]) + jnp.sum(rs[-1]) + len(ps)


def changed_in_place(ps, x):
    ps.pop(0)
    return jnp.sum(ps[0] * x)


def test_a_list_argument_copied_then_changed(x64):
    """JAX's jit gives the function a list of its own; here an argument's length is fixed
    by the call, so a copy (list(ps), ps.copy()) is changed and the argument itself is a
    located error."""
    x, ps = X, [X * 2.0, X + 1.0]
    np.testing.assert_allclose(astjax.jit(changed_after_copying)(ps, x),
                               _python_values(changed_after_copying, ps, x), rtol=1e-12)
    g = grad(changed_after_copying, argnums=(0, 1))(ps, x)
    np.testing.assert_allclose(g[0][0], 0 * x, rtol=1e-12)
    np.testing.assert_allclose(g[0][1], x, rtol=1e-12)
    np.testing.assert_allclose(g[1], x + 4.0, rtol=1e-12)
    check_grads(changed_after_copying, (ps, x), order=1)
    with pytest.raises(TypeCheckError, match=r"test_grad_lists.py:\d+:\d+: astjax cannot "
                       r"change this list's length here: .*\(xs = list\(xs\)\)"):
        astjax.jit(changed_in_place)(ps, x)


# --- a list sliced again in a loop -------------------------------------------------------------
def sliced_in_a_for_loop(x):
    hs = [x, x * 2.0, x * 3.0]
    t = 0.0
    for i in range(2):
        hs = hs[1:]
        t = t + jnp.sum(hs[0] * x)
    return t + jnp.sum(hs[-1])


def sliced_until_one_is_left(x):
    hs = [x * k for k in range(1, 4)]
    t = 0.0
    while len(hs) > 1:
        hs = hs[1:]
        hs.append(jnp.sin(hs[0]) * 0.0)
        hs = hs[:-1]
        t = t + jnp.sum(hs[0] * x)
    return t


def sliced_from_the_end_in_a_loop(x):
    """(the bound -1 is a name the loop sets every trip)"""
    hs = [x * k for k in range(1, 4)]
    t = 0.0
    for i in range(2):
        gs = hs[:-1]
        t = t + jnp.sum(gs[-1] * x)
    return t


def test_a_list_sliced_again_in_a_loop(x64):
    """Its length changes from trip to trip (JAX unrolls the loop): a list built at run
    time."""
    x = X
    for fn in (sliced_in_a_for_loop, sliced_until_one_is_left, sliced_from_the_end_in_a_loop):
        np.testing.assert_allclose(astjax.jit(fn)(x), _python_values(fn, x), rtol=1e-12)
        check_grads(fn, (x,), order=1)
    # t = 2x.x + 3x.x, then 3x
    np.testing.assert_allclose(grad(sliced_in_a_for_loop)(x), 10 * x + 3, rtol=1e-12)
    np.testing.assert_allclose(grad(sliced_until_one_is_left)(x), 10 * x, rtol=1e-12)
    np.testing.assert_allclose(grad(sliced_from_the_end_in_a_loop)(x), 8 * x, rtol=1e-12)


# --- lists of pairs, lists filled by a callee --------------------------------------------------
def pair_total(pairs):
    t = 0.0
    for a, b in pairs:
        t = t + jnp.sum(a * b)
    return t


def pairs_read_by_a_helper(x):
    pairs = []
    for i in range(3):
        pairs.append((x * i, jnp.sin(x)))
    return pair_total(pairs)


def add_pair(pairs, a):
    pairs.append((a, jnp.sin(a)))


def take_front_pair(pairs):
    a, b = pairs.pop(0)
    return jnp.sum(a * b)


def pairs_changed_by_helpers(x):
    pairs = [(x, x)]
    for i in range(2):
        add_pair(pairs, x * (i + 1.0))
    return take_front_pair(pairs) + pair_total(pairs)


def fill(lst, x):
    lst.append(jnp.sin(x))


def filled_by_a_callee(x):
    hs = []
    for i in range(3):
        fill(hs, x * i)
    return jnp.sum(jnp.stack(hs) * x)


def test_lists_of_pairs_passed_to_helpers(x64):
    x = X
    np.testing.assert_allclose(grad(pairs_read_by_a_helper)(x),
                               3 * (np.sin(x) + x * np.cos(x)), rtol=1e-6)
    for fn in (pairs_read_by_a_helper, pairs_changed_by_helpers, list_operations):
        check_grads(fn, (x,), order=1)


def test_a_list_filled_only_by_a_callee(x64):
    x = X
    want = np.sum([np.sin(x * i) * x for i in range(3)])
    np.testing.assert_allclose(astjax.jit(filled_by_a_callee)(x), want, rtol=1e-6)
    np.testing.assert_allclose(
        grad(filled_by_a_callee)(x),
        sum(np.sin(x * i) + i * x * np.cos(x * i) for i in range(3)), rtol=1e-6)
    check_grads(filled_by_a_callee, (x,), order=1)
    xs = np.stack([x, -0.5 * x])  # vmap: the list is batched from the callee's appends on
    np.testing.assert_allclose(astjax.vmap(filled_by_a_callee)(xs),
                               [filled_by_a_callee(v) for v in xs], rtol=1e-12)


# --- one compiled program on the Numba backend ---------------------------------------------------
def list_operations(x):
    hs = []
    for i in range(3):
        fill(hs, x * (i + 1.0))
    hs.extend([x, x * x])
    for i in range(2):
        hs[i] = hs[i] * x
    a = hs.pop(0)
    hs.insert(1, jnp.sin(a))
    del hs[-1]
    pairs = []
    for h in hs:
        pairs.append((h, a))
    return pair_total(pairs) + jnp.sum(sum(hs) * x)


def test_list_operations_compile_with_numba(numba_backend):
    """The python backend's gradient (checked in test_lists_of_pairs_passed_to_helpers)."""
    x = X.astype(np.float32)
    f = astjax.jit(grad(list_operations))
    got = f(x)
    (compiled,) = f.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    np.testing.assert_allclose(got, grad(list_operations)(x), rtol=2e-5)


def _rows_joined(x):
    sums = [r.sum() for r in x]
    maxes = [r.max() for r in x]
    return jnp.stack(sums + maxes + [x[0, 0]] + sums * 2)


def test_lists_of_run_time_length_concatenate_and_repeat():
    """xs + ys and xs * 2 of lists built over an array's rows (their length is known at run
    time only): "add(): expected an array, got list[f32[]]" before. Values against NumPy,
    gradients against finite differences."""
    x = np.array([[1.0, 2.5], [3.0, -4.0], [0.5, 0.25]])
    sums, maxes = list(x.sum(1)), list(x.max(1))
    want = np.array(sums + maxes + [x[0, 0]] + sums * 2)
    for f in (_rows_joined, astjax.jit(_rows_joined)):
        np.testing.assert_allclose(f(x), want)
    check_grads(lambda v: jnp.sum(_rows_joined(v) ** 2), (x,), order=1, modes=["rev"])
