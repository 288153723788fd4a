"""User-style programs for the pipeline tests. Each runs as plain NumPy too, which is the
reference: the compiled result must equal running the function itself on NumPy arrays."""
import math

import numpy as np

import astjax.numpy as jnp


def arith(x, y):
    z = np.sin(x) * 2 + y / 3.0 - x ** 2
    return z


def aug_assign(x):
    y = x + 0.0  # a new array: NumPy's += would otherwise write into the caller's x
    y += 1.0
    y *= x
    y -= 0.5
    y /= 2.0
    return y


def chained_compare(a):
    return 0.0 < a < 1.0


def conditional_expr(x, a):
    return x * 2.0 if a > 0 else x - 1.0


def early_return(x, a):
    if a > 1:
        return x * 3.0
    if a > 0:
        return x * 2.0
    return -x


def for_range(x, n):
    acc = x
    for i in range(n):
        acc = acc * 0.5 + i
    return acc


def for_range_step(x, n):
    acc = x
    for i in range(n, 0, -2):
        acc = acc + i
    return acc


def while_loop(x, n):
    k = 0
    while k < n and k < 100:
        x = x * 1.5
        k += 1
    return x


def break_continue(x, n):
    acc = x
    for i in range(n):
        if i == 1:
            continue
        if i > 4:
            break
        acc = acc + i
    return acc


def return_in_loop(x, n):
    for i in range(n):
        x = x + 1.0
        if i >= 2:
            return x * 10.0
    return x


def tuple_unpack(x, y):
    a, (b, c) = x, (y, x + y)
    b, a = a, b
    return a - b + c


def starred_unpack(x, y):
    first, *mid, last = x, y, x * 2, y * 3
    *init, z = [x, y]
    one, *none = (x,)
    (p, *q), r = (x, y, y), x
    out = first + last * 2 + z + one - r
    for m in mid + q:  # list slices: Python's starred targets are lists
        out = out + m
    return out * len(init) - p + len(none)


def enumerate_zip(x, y):
    acc = 0.0
    for i, (a, b) in enumerate(zip(x, y)):
        acc = acc + i * a * b
    return acc


def iterate_array(x):
    acc = 0.0
    for row in x:
        acc = acc + row
    return acc


def comprehension(x, n):
    parts = [x * k for k in range(n) if k != 1]
    return sum(parts)


def shapes(x):
    n = x.shape[0]
    m = len(x)
    return x * n + m + x.ndim


def _helper(v, k):
    return v * k + 1.0


def calls_helper(x):
    return _helper(x, 2.0) + _helper(x, 3)


def _countdown(v, n):
    if n <= 0:
        return v
    return _countdown(v * 2.0, n - 1)


def recursion(x, n):
    return _countdown(x, n)


SCALE = 3.0
TABLE = np.array([1.0, 2.0, 3.0], dtype=np.float32)


def uses_globals(x):
    return x * SCALE + TABLE + math.pi


def make_closure(c):
    def inner(x):
        return x * c
    return inner


def promotion(i, f):
    return i + f, i * 2.5, i // 2, f * 2


def python_scalars(x):
    a = 2.0 * 3.0
    return x * a, jnp.sin(1.0) + a


def dict_and_tuple(params, xs):
    w, b = params["w"], params["b"]
    return {"out": xs[0] * w + b, "aux": (xs[1], w)}


lambda_fn = lambda x, y: x * y + 1.0  # noqa: E731


def logical(x, a, b):
    if a > 0 or b > 0:
        x = x + 1.0
    if not (a > 0):
        x = x * 2.0
    return x


def dict_items(params, x):
    (ka, a), (kb, b) = params.items()
    first, second = params.values()
    return a * x - b, first - second, ka + kb


def shifts(k, n):
    return (k << 3) >> n, 1 << 4


def add_words(k):
    return k[0] + k[1]


def loop_in_a_branch_never_taken(x):
    """``x.ndim > 1`` is known when code is generated: the loop is dropped untyped (its
    typing once crashed on it)."""
    if x.ndim > 1:
        for i in range(3):
            x = x + i
    return x * 2.0


def loop_else(x, n):
    """``else`` on loops runs unless a break (or return) left the loop early."""
    for i in range(n):
        if i == 3:
            break
        x = x + 1.0
    else:
        x = x * 2.0
    k = 0
    while k < n:
        k += 1
    else:
        x = x - k
    for i in range(2):
        for j in range(n):
            x = x * 1.5
        else:
            break  # the inner loop's else breaks the outer loop
        x = x + 100.0
    return x


def reversed_loops(x, n):
    acc = x * 0.0
    for i in reversed(range(n)):
        acc = acc * 0.5 + x * i
    for i in reversed(range(1, n)):
        acc = acc - i
    for k, i in enumerate(range(n, 0, -2)):
        acc = acc + k * i
    for v, i in zip(reversed([x, 2.0 * x, 3.0 * x]), range(7, 1, -3)):
        acc = acc + v * i
    for row in reversed(x):
        acc = acc * 0.9 + row
    return acc
