"""reshape, ravel, swapaxes, moveaxis, expand_dims, squeeze, broadcast_to/arrays, joining,
splitting, tile, repeat, flip, roll, atleast_nd."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.errors import ShapeError
from astjax._src.ir.types import ArrayType, SequenceType, Static, array_type
from astjax._src.ops.registry import METHODS, REGISTRY, op_for_object

from .op_checks import DYN, check, f32, i32



def infer(name, *types, **params):
    op = REGISTRY[name]
    return op.infer(dict(zip(op.operands, types)), params)


def arange(*shape, dtype=np.float32):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


# --- reshape / ravel ---------------------------------------------------------------------------

@pytest.mark.parametrize("args,expected", [
    (((3, 4),), (3, 4)), ((3, 4), (3, 4)), ((-1,), (12,)), ((-1,), (12,)), ((12,), (12,)),
    ((2, -1), (2, 6)), (([4, 3],), (4, 3)), (((1, 12),), (1, 12)), ((1, -1, 1), (1, 12, 1)),
    (((2, 3, 2), "C"), (2, 3, 2))])
def test_reshape(args, expected):
    a = arange(2, 6)
    out = check("reshape", a, *args)
    assert out.shape == expected
    np.testing.assert_array_equal(out, a.reshape(expected))
    x = astjax.device_put(a)
    if not isinstance(args[-1], str):
        assert x.reshape(*args).shape == expected  # method: x.reshape(3, 4) and ((3, 4))


def test_reshape_keywords_and_dtypes(x64):
    a = arange(2, 3, dtype=np.int64)
    out = check("reshape", a, shape=(3, 2), order="C")
    assert out.dtype == np.int64 and out.shape == (3, 2)
    assert check("reshape", True, (1, 1)).dtype == np.bool_
    assert check("reshape", 2.0, (1,)).weak_type
    assert check("reshape", np.zeros((0, 3), np.float32), (-1, 3)).shape == (0, 3)
    assert check("reshape", np.float32(5), ()).shape == ()


def test_reshape_ones():
    assert infer("reshape", array_type(f32, 2), shape=(1, -1, 3)).ones == (True, False, False)
    # -1 is known to be 1 only when the whole array is
    assert infer("reshape", array_type(f32, ones=(True, True)), shape=-1).ones == (True,)
    assert infer("reshape", array_type(f32, 0), shape=(1, -1)).ones == (True, True)


def test_reshape_dynamic_entries():
    a = arange(2, 6)
    n = astjax.device_put(np.int32(3))
    out = check("reshape", a, (n, -1))
    assert out.shape == (3, 4)
    assert astjax.device_put(a).reshape(n, 4).shape == (3, 4)
    t = infer("reshape", array_type(f32, 2), shape=(DYN, -1))
    assert t == ArrayType(f32, (False, False), False)
    assert infer("reshape", array_type(f32, 2), shape=DYN, more=(1,)).ones == (False, True)


@pytest.mark.parametrize("kwargs,match", [
    (dict(shape=(-1, -1)), "only one dimension can be -1"),
    (dict(shape=(2, -2)), "negative dimension"),
    (dict(shape=(2, 6), order="F"), "order='F' is not supported"),
    (dict(shape=(2.0, 6)), "must be an integer"),
    (dict(), "missing the new shape"),
])
def test_reshape_errors(kwargs, match):
    with pytest.raises(ShapeError, match=r"reshape\(\): .*" + match):
        jnp.reshape(arange(2, 6), **kwargs)


def test_reshape_errors_symbolic_and_runtime():
    with pytest.raises(ShapeError, match="integer scalars"):
        infer("reshape", array_type(f32, 1), shape=(array_type(f32, 0), 2))
    with pytest.raises(ShapeError, match="integer scalars"):
        infer("reshape", array_type(f32, 1), shape=array_type(i32, 1))
    with pytest.raises(ValueError):  # sizes are NumPy's to check
        jnp.reshape(arange(2, 6), (5, 3))


def test_ravel_flatten():
    a = arange(2, 3, dtype=np.int32)
    out = check("ravel", a)
    np.testing.assert_array_equal(out, a.ravel())
    assert out.dtype == i32
    x = astjax.device_put(a)
    np.testing.assert_array_equal(x.flatten(), a.ravel())
    np.testing.assert_array_equal(x.ravel(), a.ravel())
    assert check("ravel", np.float32(2)).shape == (1,)
    assert infer("ravel", array_type(f32, ones=(True, True))).ones == (True,)
    with pytest.raises(ShapeError, match="order='F'"):
        jnp.ravel(a, order="F")
    assert METHODS["flatten"] == "ravel" and op_for_object(np.ravel) is REGISTRY["ravel"]


# --- moving and adding axes ----------------------------------------------------------------------

def test_swapaxes_moveaxis():
    a = arange(1, 3, 4)
    for i, j in [(0, 2), (-1, 1), (1, 1)]:
        np.testing.assert_array_equal(check("swapaxes", a, i, j), np.swapaxes(a, i, j))
    np.testing.assert_array_equal(astjax.device_put(a).swapaxes(0, 1), np.swapaxes(a, 0, 1))
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 0)), ([2, 0], [0, 1])]:
        out = check("moveaxis", a, src, dst)
        np.testing.assert_array_equal(out, np.moveaxis(a, src, dst))
    with pytest.raises(ShapeError, match=r"swapaxes\(\): axis2 3 is out of bounds"):
        jnp.swapaxes(a, 0, 3)
    with pytest.raises(ShapeError, match="same number of axes"):
        jnp.moveaxis(a, (0, 1), 2)
    with pytest.raises(ShapeError, match="repeated axis"):
        jnp.moveaxis(a, (0, 0), (1, 2))


@pytest.mark.parametrize("axis", [0, 1, -1, (0, 2), (-1, 0), (0, 1, 2)])
def test_expand_dims(axis):
    a = arange(2, 3, dtype=np.int32)
    out = check("expand_dims", a, axis)
    np.testing.assert_array_equal(out, np.expand_dims(a, axis))
    t = infer("expand_dims", array_type(i32, 2), axis=axis)
    assert [i for i, one in enumerate(t.ones) if one] == \
        sorted(a % t.ndim for a in (axis if isinstance(axis, tuple) else (axis,)))


def test_expand_dims_errors():
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.expand_dims(arange(2, 3), 3)
    with pytest.raises(ShapeError, match="repeated axis"):
        jnp.expand_dims(arange(2, 3), (0, 0))
    with pytest.raises(ShapeError, match="must be known"):
        infer("expand_dims", array_type(f32, 1), axis=DYN)


def test_squeeze():
    a = arange(1, 3, 1, 2)
    out = check("squeeze", a)
    np.testing.assert_array_equal(out, np.squeeze(a))
    np.testing.assert_array_equal(check("squeeze", a, 2), np.squeeze(a, 2))
    np.testing.assert_array_equal(check("squeeze", a, (0, -2)), np.squeeze(a, (0, 2)))
    np.testing.assert_array_equal(astjax.device_put(a).squeeze(), np.squeeze(a))
    assert check("squeeze", np.float32(1)).shape == ()


def test_squeeze_uses_known_ones_only():
    op = REGISTRY["squeeze"]
    t = array_type(f32, ones=(True, False, True))
    # axis=None drops only the dims the type knows to be 1, and the impl is told which
    assert op.infer({"a": t}, {}).ones == (False,)
    assert op.rules["resolve_params"]({"a": t}, {}) == {"axis": (0, 2)}
    a = np.ones((1, 1, 1), np.float32)  # the middle dim is 1 at run time, not in the type
    params = op.rules["resolve_params"]({"a": t}, {"axis": None})
    assert op.impl(a, **params).shape == (1,)
    # an explicit axis need not be known-1: NumPy checks it at run time
    assert op.infer({"a": t}, {"axis": 1}).ones == (True, True)
    with pytest.raises(ValueError):
        jnp.squeeze(arange(2, 3), 0)
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.squeeze(arange(2, 3), 2)


def test_broadcast_to():
    a = arange(3, dtype=np.int32)
    for shape in [(2, 3), (1, 3), (2, 1, 3), 3, (0, 3)]:
        out = check("broadcast_to", a, shape)
        np.testing.assert_array_equal(out, np.broadcast_to(a, shape))
        assert out.dtype == i32
    n = astjax.device_put(np.int32(4))
    assert check("broadcast_to", a, (n, 3)).shape == (4, 3)
    assert infer("broadcast_to", array_type(f32, 1), shape=(DYN, 1)).ones == (False, True)
    with pytest.raises(ShapeError, match="rank 1 to a shape of rank 0"):
        jnp.broadcast_to(a, ())
    with pytest.raises(ShapeError, match="negative dimension"):
        jnp.broadcast_to(a, (-1, 3))
    with pytest.raises(ValueError):
        jnp.broadcast_to(a, (2, 4))


def test_broadcast_arrays():
    a, b = arange(3, 1), arange(1, 4, dtype=np.int32)
    out = check("broadcast_arrays", a, b, 2.0)
    assert isinstance(out, list) and [o.shape for o in out] == [(3, 4)] * 3
    assert [o.dtype for o in out] == [f32, i32, f32] and out[2].weak_type
    np.testing.assert_array_equal(out[1], np.broadcast_to(b, (3, 4)))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_atleast(n):
    name = f"atleast_{n}d"
    np_fn = getattr(np, name)
    for a in [np.float32(2), arange(3), arange(2, 3), arange(2, 3, 4), arange(1)]:
        out = check(name, a)
        assert out.shape == np_fn(a).shape
    outs = check(name, arange(3), np.int32(1))
    assert isinstance(outs, list) and [o.shape for o in outs] == [np_fn(arange(3)).shape,
                                                                    np_fn(np.int32(1)).shape]


# --- joining -----------------------------------------------------------------------------------

@pytest.mark.parametrize("shapes,axis", [
    ([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1)], 1), ([(2, 3), (2, 3), (2, 3)], -1),
    ([(1, 3)], 0), ([(2, 3), (1,)], None), ([(0, 3), (2, 3)], 0), ([(2, 1), (2, 4)], -1)])
def test_concatenate(shapes, axis):
    arrays = [arange(*s) + k for k, s in enumerate(shapes)]
    out = check("concatenate", arrays, axis)
    np.testing.assert_array_equal(out, np.concatenate(arrays, axis))
    np.testing.assert_array_equal(check("concat", tuple(arrays), axis=axis), out)


def test_concatenate_dtypes(x64):
    a, b = arange(2, dtype=np.int32), arange(3, dtype=np.float32)
    assert check("concatenate", [a, b]).dtype == f32
    assert check("concatenate", [a, a.astype(np.int64)]).dtype == np.int64
    assert check("concatenate", [a, b], dtype=np.int32).dtype == i32
    assert check("concatenate", [a > 0, a > 1]).dtype == np.bool_
    astjax.config.update("jax_enable_x64", False)
    assert check("concatenate", [b], dtype=np.float64).dtype == f32  # canonicalized


def test_concatenate_types():
    x = array_type(f32, ones=(True, False))
    y = array_type(f32, 2)
    t = infer("concatenate", SequenceType((x, y)), axis=1)
    assert t.ones == (True, False)  # the other dims must agree, so one known 1 decides
    assert infer("concatenate", SequenceType((x, y)), axis=0).ones == (False, False)
    assert infer("concatenate", SequenceType((x,)), axis=0).ones == (True, False)
    with pytest.raises(ShapeError, match=r"concatenate\(\): all arrays must have the same rank"):
        jnp.concatenate([arange(2, 3), arange(3)])
    with pytest.raises(ShapeError, match="zero-dimensional"):
        jnp.concatenate([np.float32(1), np.float32(2)])
    with pytest.raises(ShapeError, match="at least one array"):
        jnp.concatenate([])
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.concatenate([arange(3), arange(3)], axis=1)
    with pytest.raises(ValueError):
        jnp.concatenate([arange(2, 3), arange(2, 4)], axis=0)


@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (2, 3)], [(), ()], [(1, 2)]])
@pytest.mark.parametrize("axis", [0, -1])
def test_stack(shapes, axis):
    arrays = [arange(*s, dtype=np.int32) + k for k, s in enumerate(shapes)]
    out = check("stack", arrays, axis)
    np.testing.assert_array_equal(out, np.stack(arrays, axis))
    assert out.dtype == i32


def test_stack_dtypes():
    out = check("stack", [np.int32(1), 2.5])
    assert out.dtype == f32
    np.testing.assert_array_equal(out, [1.0, 2.5])
    assert check("stack", [np.float32(1.5)], dtype=np.int32).dtype == i32
    assert check("stack", [2, 3]).weak_type


def test_stack_errors():
    with pytest.raises(ShapeError, match=r"stack\(\): all arrays must have the same shape"):
        jnp.stack([arange(3), arange(1, 3)])
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.stack([arange(3)], axis=2)


@pytest.mark.parametrize("shapes", [[(3,), (2,)], [(2, 3), (2, 1)], [(), (2,)], [(1,), ()],
                                    [(2, 3, 1), (2, 1, 1)]])
def test_hstack(shapes):
    arrays = [arange(*s) + k for k, s in enumerate(shapes)]
    out = check("hstack", arrays)
    np.testing.assert_array_equal(out, np.hstack(arrays))


@pytest.mark.parametrize("shapes", [[(3,), (3,)], [(2, 3), (1, 3)], [(), ()],
                                    [(2, 3, 1), (1, 3, 1)]])
def test_vstack(shapes):
    arrays = [arange(*s) + k for k, s in enumerate(shapes)]
    out = check("vstack", arrays)
    np.testing.assert_array_equal(out, np.vstack(arrays))
    assert check("vstack", arrays, dtype=np.int32).dtype == i32


# --- splitting ---------------------------------------------------------------------------------

@pytest.mark.parametrize("spec,axis", [(3, 0), (2, 1), ([1, 3], 0), ([2], -1), ([0, 1, 5], 0),
                                       (1, 1), ([-1], 0)])
def test_split(spec, axis):
    a = arange(6, 4)
    out = check("split", a, spec, axis)
    expected = np.split(a, spec, axis)
    assert len(out) == len(expected)
    for o, e in zip(out, expected):
        np.testing.assert_array_equal(o, e)


@pytest.mark.parametrize("spec", [2, 3, 4, [1, 2]])
def test_array_split(spec):
    for a in [arange(5, 2), arange(1, 2)]:
        out = check("array_split", a, spec)
        for o, e in zip(out, np.array_split(a, spec)):
            np.testing.assert_array_equal(o, e)


def test_split_types():
    t = infer("split", array_type(f32, 2), indices_or_sections=[1, 2, 4], axis=0)
    assert [e.ones for e in t.elts] == [(True, False), (True, False), (False, False),
                                        (False, False)]
    t = infer("split", array_type(f32, ones=(True, False)), indices_or_sections=1)
    assert t.elts[0].ones == (True, False) and t.kind == "list"
    with pytest.raises(ShapeError, match="positive"):
        jnp.split(arange(4), 0)
    with pytest.raises(ShapeError, match="zero-dimensional"):
        jnp.split(np.float32(1), 1)
    with pytest.raises(ShapeError, match="must be known"):
        infer("split", array_type(f32, 1), indices_or_sections=DYN)
    with pytest.raises(ValueError):  # unequal division is NumPy's to report
        jnp.split(arange(5), 2)


# --- tile, repeat, flip, roll --------------------------------------------------------------------

@pytest.mark.parametrize("reps", [2, (2, 1), (1, 3), (2, 1, 2), (0,), 1])
def test_tile(reps):
    for a in [arange(1, 3, dtype=np.int32), arange(3), np.float32(2)]:
        out = check("tile", a, reps)
        np.testing.assert_array_equal(out, np.tile(a, reps))
        assert out.dtype == a.dtype


@pytest.mark.parametrize("repeats,axis", [(2, None), (1, None), (3, 0), (1, 1), (2, -1),
                                          (0, 0)])
def test_repeat(repeats, axis):
    a = arange(1, 3, dtype=np.int32)
    out = check("repeat", a, repeats, axis)
    np.testing.assert_array_equal(out, np.repeat(a, repeats, axis))
    np.testing.assert_array_equal(astjax.device_put(a).repeat(repeats, axis=axis), out)


def test_repeat_arrays_and_errors():
    a = arange(3)
    reps = astjax.device_put(np.array([1, 0, 2], np.int32))
    np.testing.assert_array_equal(check("repeat", a, reps), np.repeat(a, [1, 0, 2]))
    assert infer("repeat", array_type(f32, ones=(True,)), repeats=1, axis=0).ones == (True,)
    assert infer("repeat", array_type(f32, ones=(True,)), repeats=DYN, axis=0).ones == (False,)
    with pytest.raises(ShapeError, match="repeats must be an integer"):
        jnp.repeat(a, np.ones(3, np.float32))
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.repeat(a, 2, axis=1)


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 1)])
def test_flip(axis):
    a = arange(2, 3, dtype=np.int32)
    np.testing.assert_array_equal(check("flip", a, axis), np.flip(a, axis))
    assert check("flip", np.float32(1)).shape == ()
    with pytest.raises(ShapeError, match="out of bounds"):
        jnp.flip(a, 2)


@pytest.mark.parametrize("shift,axis", [(1, None), (-2, 0), (1, 1), ((1, 2), (0, 1)),
                                        (5, -1)])
def test_roll(shift, axis):
    a = arange(2, 3)
    np.testing.assert_array_equal(check("roll", a, shift, axis), np.roll(a, shift, axis))
    s = astjax.device_put(np.int32(2))
    np.testing.assert_array_equal(check("roll", a, s, 1), np.roll(a, 2, 1))
    with pytest.raises(ShapeError, match="shift must be an integer"):
        jnp.roll(a, np.float32(1.5))


def test_methods_and_aliases():
    for m in ("reshape", "ravel", "flatten", "swapaxes", "squeeze", "repeat"):
        assert m in METHODS
    for fn in (np.reshape, np.concatenate, np.stack, np.split, np.tile, np.squeeze):
        assert op_for_object(fn) is REGISTRY[fn.__name__]


def test_static_operand_types():
    t = infer("expand_dims", Static(2.0), axis=0)
    assert t == ArrayType(f32, (True,), True)
    t = infer("concatenate", SequenceType((array_type(i32, 1), Static(1.5))), axis=None)
    assert t.dtype == f32


# --- compiled code agrees with eager --------------------------------------------------------------

def jit_agrees(fn, *args):
    """``jit(fn)(*args)`` gives the eager results: values, shapes and dtypes."""
    out = astjax.jit(fn)(*args)
    ref = fn(*[astjax.device_put(a) if isinstance(a, np.ndarray) else a for a in args])
    for o, r in zip(out, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        np.testing.assert_array_equal(np.asarray(o), np.asarray(r))


def _shapes(x, n):
    parts = jnp.split(x, 2, axis=1)
    return (x.reshape(n, -1), jnp.reshape(x, (n, -1)), x.reshape((4, 3)), x.ravel(),
            x.flatten(), x.swapaxes(0, 1), jnp.moveaxis(x, 0, -1), jnp.expand_dims(x, (0, 2)),
            jnp.squeeze(x[None]), x[:, :1].squeeze(1), jnp.broadcast_to(x[0], (n, 6)),
            jnp.concatenate([x, x], axis=1), jnp.stack((x, x), -1), jnp.hstack([x, x]),
            jnp.vstack((x, x)), parts[0], parts[1], jnp.tile(x, (2, 1)), x.repeat(2, axis=0),
            jnp.flip(x, 1), jnp.roll(x, n, 0), jnp.atleast_3d(x), jnp.array_split(x, 4)[3])


def test_compiled_shape_ops():
    jit_agrees(_shapes, np.arange(12, dtype=np.int32).reshape(2, 6), 3)


def _squeeze_unknown_one(x, n):
    return (jnp.squeeze(x[n:n + 1]),)


def test_compiled_squeeze_of_a_dim_not_known_to_be_one():
    # x[n:n+1] is 1 at run time but not known to be 1: squeeze() must keep it
    out = astjax.jit(_squeeze_unknown_one)(np.ones((4, 3), np.float32), 1)[0]
    assert out.shape == (1, 3)


def test_repeat_total_repeat_length_as_jax():
    """jnp.repeat(..., total_repeat_length=n) (JAX's keyword; it was "unexpected keyword
    argument"): cut short, or filled with the last element. JAX 0.10.2's values."""
    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    reps = np.int32([1, 0, 2])
    for f in (jnp.repeat, astjax.jit(jnp.repeat, static_argnames=("axis", "total_repeat_length"))):
        np.testing.assert_array_equal(f(x, reps, axis=0, total_repeat_length=5),
                                      [[0, 1], [4, 5], [4, 5], [4, 5], [4, 5]])
        np.testing.assert_array_equal(f(x, reps, axis=0, total_repeat_length=2), [[0, 1], [4, 5]])
        np.testing.assert_array_equal(f(np.arange(3), 2, total_repeat_length=4), [0, 0, 1, 1])


def test_jit_of_a_jnp_function_taking_star_args():
    """jit(jnp.atleast_2d)(x) (a jnp function taking *arys) raised "astjax cannot transform
    jnp.atleast_2d itself"; JAX's shapes."""
    v = np.float32([1, 2, 3])
    assert astjax.jit(jnp.atleast_2d)(v).shape == (1, 3)
    assert [a.shape for a in astjax.jit(jnp.atleast_3d)(v, v[None])] == [(1, 3, 1)] * 2
    assert astjax.vmap(jnp.atleast_2d)(np.ones((4, 3), np.float32)).shape == (4, 1, 3)
