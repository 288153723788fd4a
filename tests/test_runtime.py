"""The device runtime: asynchronous dispatch, devices and transfers, donation, debug_nans.

Asynchronous semantics are tested on ``dispatch.execute`` (what jitted calls run through)
with plain Python/NumPy functions, so they do not depend on a backend.
"""
import gc
import os
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import Array
from astjax._src.ir.types import ArrayType, SequenceType, Static, TreeType
from astjax._src.runtime import devices as devices_mod
from astjax._src.runtime import dispatch

F32 = ArrayType(np.dtype(np.float32), (False,), False)
HERE = os.path.abspath(__file__)


@pytest.fixture
def async_on():
    """Send every call to the device queue (threshold 0)."""
    before = (astjax.config.astjax_async_dispatch, astjax.config.astjax_async_min_bytes)
    astjax.config.update("astjax_async_dispatch", True)
    astjax.config.update("astjax_async_min_bytes", 0)
    yield
    dispatch.synchronize_all()
    astjax.config.update("astjax_async_dispatch", before[0])
    astjax.config.update("astjax_async_min_bytes", before[1])


@pytest.fixture
def four_devices():
    old = devices_mod._set_num_cpu_devices(4)
    yield astjax.devices()
    for d in astjax.devices():
        d.synchronize()
    devices_mod._CPU = old


@pytest.fixture
def debug_nans():
    astjax.config.update("debug_nans", True)
    yield
    astjax.config.update("debug_nans", False)


def slow(seconds, fn=lambda x: x * 2):
    def run(x):
        time.sleep(seconds)
        return fn(x)
    return run


# --- asynchronous dispatch ------------------------------------------------------------------

def test_dispatch_returns_before_the_work_is_done(async_on):
    x = np.arange(4, dtype=np.float32)
    t0 = time.perf_counter()
    y = dispatch.execute(slow(0.5), [x], F32, name="jit(slow)")
    issued = time.perf_counter() - t0
    assert issued < 0.25, issued  # the work takes 0.5 s
    assert isinstance(y, Array) and not y.is_ready()
    assert y.dtype == np.float32 and y.ndim == 1 and not y.is_ready()  # known without waiting
    assert y.block_until_ready() is y
    assert time.perf_counter() - t0 >= 0.5 and y.is_ready()
    np.testing.assert_array_equal(y, x * 2)


@pytest.mark.parametrize("read", [
    np.asarray, repr, str, lambda a: a.tolist(), lambda a: a.shape,
    lambda a: float(a[0]), lambda a: astjax.device_get(a),
    lambda a: astjax.block_until_ready({"k": [a]})])
def test_reading_a_pending_array_waits(async_on, read):
    x = np.arange(3, dtype=np.float32)
    y = dispatch.execute(slow(0.2), [x], F32)
    assert not y.is_ready()
    read(y)
    assert y.is_ready()
    np.testing.assert_array_equal(np.asarray(y), [0, 2, 4])


@pytest.mark.parametrize("op, expected", [
    (lambda a: a[1], 2.0), (lambda a: a + 1, [1.0, 3.0, 5.0]), (lambda a: a.sum(), 6.0),
    (lambda a: jnp.concatenate([a, a[:1]]), [0.0, 2.0, 4.0, 0.0]),
    (lambda a: jnp.split(a, 3)[2], [4.0])])
def test_eager_ops_on_a_pending_array_are_queued_behind_it(async_on, op, expected):
    y = dispatch.execute(slow(0.3), [np.arange(3, dtype=np.float32)], F32)
    t0 = time.perf_counter()
    z = op(y)
    assert time.perf_counter() - t0 < 0.2 and not z.is_ready()
    np.testing.assert_array_equal(np.asarray(z), expected)
    assert z.dtype == np.float32


def test_an_eager_error_in_queued_work_names_the_line_of_the_op(async_on):
    y = dispatch.execute(slow(0.2), [np.arange(3, dtype=np.float32)], F32)
    z = y + jnp.ones(4)  # sizes only meet at run time
    with pytest.raises(ValueError, match=r"test_runtime.py:\d+: jnp.add: .*\n +z = y \+ jnp"):
        np.asarray(z)


def test_big_eager_ops_are_queued(async_on):
    y = jnp.ones(1000) * 3.0  # async_on queues calls of any size
    assert type(y._pending) is dispatch.LeafRef
    np.testing.assert_array_equal(np.asarray(y), np.full(1000, 3.0))


def test_scalar_conversions_and_python_if_wait(async_on):
    t = ArrayType(np.dtype(np.float32), (), False)
    s = dispatch.execute(slow(0.1, lambda x: x.sum()), [np.ones(3, np.float32)], t)
    assert float(s) == 3.0
    for conv in (int, bool, lambda v: v.item()):
        s = dispatch.execute(slow(0.1, lambda x: x.sum()), [np.ones(3, np.float32)], t)
        assert conv(s) in (3, True)
    s = dispatch.execute(slow(0.1, lambda x: x.sum()), [np.ones(3, np.float32)], t)
    taken = "yes" if s > 2 else "no"
    assert taken == "yes"


def test_work_on_a_device_runs_in_issue_order(async_on):
    order = []

    def step(i, seconds):
        def run(x):
            time.sleep(seconds)
            order.append(i)
            return x + i
        return run

    x = np.zeros(2, np.float32)
    outs = [dispatch.execute(step(i, 0.05 if i % 2 == 0 else 0.0), [x], F32) for i in range(6)]
    astjax.block_until_ready(outs)
    assert order == list(range(6))
    assert [float(o[0]) for o in outs] == [float(i) for i in range(6)]


def test_small_call_behind_queued_work_is_queued_too():
    """Below the size threshold a call runs inline, unless its device is busy (order)."""
    order = []
    x = np.zeros(2, np.float32)

    def record(i, seconds=0.0):
        def run(v):
            time.sleep(seconds)
            order.append(i)
            return v
        return run

    astjax.config.update("astjax_async_min_bytes", 1 << 40)
    try:
        inline = dispatch.execute(record("inline"), [x], F32)
        assert inline.is_ready() and order == ["inline"]
        astjax.config.update("astjax_async_min_bytes", 0)
        big = dispatch.execute(record("big", 0.3), [x], F32)
        astjax.config.update("astjax_async_min_bytes", 1 << 40)
        small = dispatch.execute(record("small"), [x], F32)
        assert not small.is_ready()  # queued behind `big`
        astjax.block_until_ready((big, small))
        assert order == ["inline", "big", "small"]
    finally:
        dispatch.synchronize_all()
        astjax.config.update("astjax_async_min_bytes", 1 << 22)


def test_async_can_be_switched_off():
    before = astjax.config.astjax_async_dispatch
    astjax.config.update("astjax_async_dispatch", False)
    astjax.config.update("astjax_async_min_bytes", 0)
    try:
        y = dispatch.execute(slow(0.0), [np.ones(2, np.float32)], F32)
        assert y.is_ready()
    finally:
        astjax.config.update("astjax_async_dispatch", before)
        astjax.config.update("astjax_async_min_bytes", 1 << 22)


def test_default_policy_queues_only_big_calls():
    assert astjax.config.astjax_async_min_bytes == 1 << 22
    small = dispatch.execute(lambda x: x, [np.ones(16, np.float32)], F32)
    assert small.is_ready()
    big = dispatch.execute(slow(0.2), [np.ones(1 << 20, np.float32)], F32)  # 4 MiB
    assert not big.is_ready()
    assert float(big[0]) == 2.0


def test_errors_surface_at_the_first_wait_with_their_message(async_on):
    def fails(x):
        time.sleep(0.1)
        raise ValueError("prog.py:12: shapes (3,) and (4,) do not broadcast")

    y = dispatch.execute(fails, [np.ones(3, np.float32)], F32, name="jit(fails)")
    assert not y.is_ready()  # the caller got past the call
    with pytest.raises(ValueError, match=r"prog.py:12: shapes \(3,\) and \(4,\)"):
        y.block_until_ready()
    with pytest.raises(ValueError, match="do not broadcast"):  # and at every later read
        np.asarray(y)
    z = dispatch.execute(fails, [np.ones(3, np.float32)], F32)
    with pytest.raises(ValueError, match="do not broadcast"):
        astjax.block_until_ready([np.ones(2), z])
    w = dispatch.execute(fails, [np.ones(3, np.float32)], F32)
    v = w + 1  # queued behind w
    with pytest.raises(ValueError, match="^prog.py:12: shapes"):  # w's error, as it was
        np.asarray(v)


def test_an_error_nobody_reads_is_reported_not_lost(async_on):
    def fails(x):
        raise KeyError("lost?")

    y = dispatch.execute(fails, [np.ones(3, np.float32)], F32)
    dispatch.synchronize_all()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del y
        gc.collect()
    assert any("never observed" in str(w.message) and "lost?" in str(w.message)
               for w in caught)


def test_a_failed_call_does_not_stop_the_queue(async_on):
    def fails(x):
        raise RuntimeError("first")

    bad = dispatch.execute(fails, [np.ones(2, np.float32)], F32)
    good = dispatch.execute(slow(0.0), [np.ones(2, np.float32)], F32)
    np.testing.assert_array_equal(good, [2, 2])
    with pytest.raises(RuntimeError, match="first"):
        bad.block_until_ready()


def test_pending_structured_outputs(async_on):
    out_type = SequenceType((F32, Static(3), TreeType(dict, ("a", "b"), ("a", "b"), (F32, F32))))

    def fn(x):
        time.sleep(0.1)
        return (x, 3, {"a": x + 1, "b": x + 2})

    y, three, d = dispatch.execute(fn, [np.zeros(2, np.float32)], out_type)
    assert not y.is_ready() and isinstance(d, dict) and sorted(d) == ["a", "b"]
    assert isinstance(three, Array) and three.weak_type and int(three) == 3
    np.testing.assert_array_equal(d["b"], [2, 2])
    np.testing.assert_array_equal(y, [0, 0])


def test_outputs_are_wrapped_like_the_python_backend():
    t = ArrayType(np.dtype(np.float32), (), True)
    out = dispatch.execute(lambda: np.float64(2.5), [], t)
    assert isinstance(out, Array) and out.dtype == np.float32 and out.weak_type
    pair = dispatch.execute(lambda: [np.ones(2), 1], [], SequenceType((F32, Static(1)), "list"))
    assert isinstance(pair, list) and pair[0].dtype == np.float32 and int(pair[1]) == 1


def test_a_custom_wrap_runs_on_both_paths(async_on):
    def wrap(raw, t):  # a backend whose raw results are laid out differently
        return (Array(np.asarray(raw[0], np.float32)), Array(np.asarray(raw[1], np.float32)))

    t = SequenceType((F32, F32))
    a, b = dispatch.execute(lambda x: [x, x * 3], [np.ones(2, np.float32)], t, wrap=wrap)
    np.testing.assert_array_equal(b, [3, 3])
    astjax.config.update("astjax_async_dispatch", False)
    a, b = dispatch.execute(lambda x: [x, x * 3], [np.ones(2, np.float32)], t, wrap=wrap)
    assert b.is_ready() and float(b[0]) == 3


def test_concurrent_readers_get_the_same_value(async_on):
    y = dispatch.execute(slow(0.2), [np.arange(4, dtype=np.float32)], F32)
    got = []
    threads = [threading.Thread(target=lambda: got.append(np.asarray(y).tolist()))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [[0, 2, 4, 6]] * 4


def test_pickling_and_copying_a_pending_array(async_on):
    import pickle
    y = dispatch.execute(slow(0.1), [np.ones(2, np.float32)], F32)
    z = pickle.loads(pickle.dumps(y))
    np.testing.assert_array_equal(z, [2, 2])
    y2 = dispatch.execute(slow(0.1), [np.ones(2, np.float32)], F32)
    np.testing.assert_array_equal(y2.copy(), [2, 2])


# --- devices and transfers ------------------------------------------------------------------

def test_one_device_by_default():
    assert astjax.device_count() == 1 and astjax.default_backend() == "cpu"
    d = astjax.devices()[0]
    assert astjax.local_devices() == [d] and d.platform == "cpu" and d.id == 0
    x = jnp.ones(2)
    assert x.device is d and x.devices() == {d} and not x.committed
    with pytest.raises(RuntimeError, match="backend"):
        astjax.local_devices(backend="gpu")


def test_split_cpu_devices_and_placement(four_devices):
    devs = four_devices
    assert astjax.device_count() == 4 and [d.id for d in devs] == [0, 1, 2, 3]
    assert repr(devs[2]) == "CpuDevice(id=2)" and len(set(devs)) == 4
    host = np.arange(3, dtype=np.float32)
    x = astjax.device_put(host, devs[2])
    assert x.device is devs[2] and x.devices() == {devs[2]} and x.committed
    host[0] = 100  # device_put copied
    assert float(x[0]) == 0.0
    y = x * 2 + 1  # eager results follow their committed inputs
    assert y.device is devs[2]
    assert (jnp.ones(3) + x).device is devs[2]  # uncommitted operands go along
    z = astjax.device_put(x, devs[3])
    assert z.device is devs[3] and not np.shares_memory(np.asarray(z), np.asarray(x))
    np.testing.assert_array_equal(z, x)
    assert astjax.device_put(x, devs[2]) is x
    assert astjax.device_put(x) is x
    with pytest.raises(ValueError, match="different devices"):
        x + z
    tree = astjax.device_put({"a": np.ones(2, np.float32), "b": [1.0, x]}, devs[1])
    assert {leaf.device for leaf in astjax.tree_util.tree_leaves(tree)} == {devs[1]}
    got = astjax.device_get(tree)
    assert isinstance(got["b"][1], np.ndarray)
    np.testing.assert_array_equal(got["b"][1], x)


def test_calls_run_on_the_committed_device(four_devices, async_on):
    devs = four_devices
    threads = []

    def where(x):
        threads.append(threading.current_thread().name)
        return x

    x = astjax.device_put(np.ones(2, np.float32), devs[3])
    out = dispatch.execute(where, [np.ones(2, np.float32)], F32, device=dispatch.placement([x]))
    assert out.device is devs[3] and out.committed
    out.block_until_ready()
    u = dispatch.execute(where, [np.ones(2, np.float32)], F32, device=None)
    assert u.device is devs[0] and not u.committed
    u.block_until_ready()
    assert threads == ["astjax CPU_3 worker", "astjax CPU_0 worker"]
    with pytest.raises(ValueError, match="different devices"):
        dispatch.placement([x, {"k": astjax.device_put(1.0, devs[1])}])


def test_devices_run_concurrently(four_devices, async_on):
    devs = four_devices
    t0 = time.perf_counter()
    outs = [dispatch.execute(slow(0.3), [np.ones(2, np.float32)], F32, device=d)
            for d in devs]
    astjax.block_until_ready(outs)
    assert time.perf_counter() - t0 < 0.3 * 4 * 0.75  # sleeping workers overlap


def test_copy_to_host_async_and_device_get(async_on):
    y = dispatch.execute(slow(0.1), [np.ones(2, np.float32)], F32)
    assert y.copy_to_host_async() is None
    got = astjax.device_get({"y": y, "n": 3})
    assert got["n"] == 3 and got["y"].tolist() == [2.0, 2.0]


def test_env_var_splits_the_cpu(tmp_path):
    script = ("import astjax, astjax.numpy as jnp, numpy as np\n"
              "ds = astjax.devices()\n"
              "x = astjax.device_put(np.ones(2), ds[-1])\n"
              "print(astjax.device_count(), len(astjax.local_devices()), (x + 1).device.id)\n")
    env = dict(os.environ, ASTJAX_NUM_CPU_DEVICES="3")
    env["PYTHONPATH"] = os.path.dirname(os.path.dirname(os.path.abspath(astjax.__file__)))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["3", "3", "2"]
    env["ASTJAX_NUM_CPU_DEVICES"] = "zero"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode != 0 and "ASTJAX_NUM_CPU_DEVICES must be a positive integer" in out.stderr


def test_device_put_rejects_unknown_devices(four_devices):
    with pytest.raises(ValueError, match="unknown device"):
        astjax.device_put(1.0, "cpu:1")
    stale = devices_mod.CpuDevice(9)
    with pytest.raises(ValueError, match="unknown device"):
        astjax.device_put(1.0, stale)


# --- donation and deletion ------------------------------------------------------------------

def test_donate_reuses_an_owned_buffer_and_deletes_the_array():
    y = dispatch.execute(lambda x: x * 2, [np.ones(4, np.float32)], F32)
    own = y._value
    buf = dispatch.donate(y)
    del own
    assert y.is_deleted()
    buf2 = None
    z = dispatch.execute(lambda x: x * 2, [np.ones(4, np.float32)], F32)
    ptr = z._value.__array_interface__["data"][0]
    buf2 = dispatch.donate(z)
    assert buf2.__array_interface__["data"][0] == ptr  # really the same memory
    assert buf2.flags.writeable
    buf2[:] = 7  # the call may overwrite it
    with pytest.raises(RuntimeError, match=r"Array has been deleted \(donated to a jitted call\)"):
        np.asarray(z)
    for read in (lambda a: float(a[0]), str, lambda a: a + 1, lambda a: a.block_until_ready(),
                 lambda a: dispatch.donate(a), lambda a: astjax.jit(lambda v: v)(a)):
        with pytest.raises(RuntimeError, match="deleted"):
            read(z)
    assert z.shape == (4,) and z.dtype == np.float32  # metadata survives
    assert repr(z) == "Array(<deleted>, shape=(4,), dtype=float32)"
    assert buf.shape == (4,)


def test_donate_copies_a_shared_buffer():
    base = np.arange(4, dtype=np.float32)
    x = jnp.asarray(base)
    view = x[1:]  # eager getitem: a NumPy view of x's buffer
    buf = dispatch.donate(x)
    assert x.is_deleted() and not np.shares_memory(buf, np.asarray(view))
    buf[:] = -1
    np.testing.assert_array_equal(view, [1, 2, 3])  # the view is intact
    user = np.ones(3, np.float32)
    y = Array(user)  # wraps the user's NumPy array
    assert not np.shares_memory(dispatch.donate(y), user)


def test_donate_waits_for_pending_work(async_on):
    y = dispatch.execute(slow(0.1), [np.ones(2, np.float32)], F32)
    buf = dispatch.donate(y)
    assert buf.tolist() == [2, 2] and y.is_deleted()


def test_convert_inputs_donates_the_listed_arguments():
    a = dispatch.execute(lambda x: x + 1, [np.zeros(2, np.float32)], F32)
    b = jnp.ones(2)
    t = ArrayType(np.dtype(np.float32), (False,), False)
    inputs = dispatch.convert_inputs([a, b, 2], [t, t, Static(2)], donate_argnums=(0,))
    assert a.is_deleted() and not b.is_deleted() and inputs[2] == 2
    assert inputs[0].tolist() == [1, 1] and inputs[1] is b._value


def test_delete():
    x = jnp.arange(3.0)
    assert not x.is_deleted()
    x.delete()
    assert x.is_deleted() and "deleted" in repr(x)
    with pytest.raises(RuntimeError, match=r"deleted with Array.delete\(\)"):
        x.tolist()
    x.delete()  # twice is fine


# --- debug_nans -----------------------------------------------------------------------------

pytestmark = pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")

def test_debug_nans_eager_names_the_user_line(debug_nans):
    x = jnp.asarray(np.array([0.0, 1.0], np.float32))
    line = sys._getframe().f_lineno + 2
    with pytest.raises(FloatingPointError) as info:
        x / x  # 0/0
    message = str(info.value)
    assert f"{HERE}:{line}" in message and "NaN" in message and "true_divide" in message
    assert "x / x" in message  # the source line
    jnp.log(x + 1)  # no NaN: no error
    ints = jnp.arange(3) // 1
    assert ints.tolist() == [0, 1, 2]


def test_debug_nans_off_lets_nans_through():
    x = jnp.zeros(2)
    assert np.isnan(np.asarray(x / x)).all()


def test_debug_nans_under_jax_names():
    # JAX's debugging page writes config.update("jax_debug_nans", True) and
    # `with jax.debug_nans(False):`; astjax knew only "debug_nans" (AttributeError)
    x = jnp.zeros(2)
    astjax.config.update("jax_debug_nans", True)
    try:
        assert astjax.config.debug_nans and astjax.config.jax_debug_nans
        with pytest.raises(FloatingPointError):
            x / x
        with astjax.debug_nans(False):
            assert np.isnan(np.asarray(x / x)).all()
        assert astjax.config.debug_nans
        with pytest.raises(FloatingPointError):
            x / x
    finally:
        astjax.config.update("jax_debug_nans", False)
    assert not astjax.config.debug_nans
    with astjax.debug_nans(True):
        with pytest.raises(FloatingPointError):
            x / x
    assert np.isnan(np.asarray(x / x)).all()
    with astjax.log_compiles(True):
        assert astjax.config.jax_log_compiles
    assert not astjax.config.log_compiles


def test_debug_nans_for_calls(debug_nans, async_on):
    line = sys._getframe().f_lineno + 1
    y = dispatch.execute(slow(0.05, lambda x: x / x), [np.zeros(2, np.float32)], F32,
                         name="jit(f)")
    with pytest.raises(FloatingPointError, match=rf"{HERE}:{line}.*jit\(f\)"):
        y.block_until_ready()
    astjax.config.update("astjax_async_dispatch", False)
    line = sys._getframe().f_lineno + 2
    with pytest.raises(FloatingPointError, match=rf"{HERE}:{line}.*jit\(f\)"):
        dispatch.execute(lambda x: x / x, [np.zeros(2, np.float32)], F32, name="jit(f)")
    with pytest.raises(FloatingPointError, match="somewhere.py:3"):
        dispatch.check_nans({"a": np.array([np.nan])}, "somewhere.py:3")
    dispatch.check_nans((np.ones(2), jnp.ones(2), 3), "x.py:1")


def _log_then_scale(x):
    y = jnp.log(x)  # the NaN's origin
    return y * 2.0


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_debug_nans_under_jit_names_the_operation_and_the_call(debug_nans, backend):
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", backend)
    try:
        f = astjax.jit(_log_then_scale)
        f(np.ones(2, np.float32))  # no NaN, and the Numba compile happens here
        origin = _log_then_scale.__code__.co_firstlineno + 1
        line = sys._getframe().f_lineno + 2
        with pytest.raises(FloatingPointError) as info:
            f(np.array([1.0, -1.0], np.float32))
    finally:
        astjax.config.update("astjax_jit_backend", before)
    message = str(info.value)
    assert message.startswith(f"{HERE}:{origin}: invalid value encountered in log")
    assert "y = jnp.log(x)" in message
    assert f"jit(_log_then_scale) (debug_nans is on), called at {HERE}:{line}" in message


def _log_of_a_scalar(x):
    return jnp.log(-x) * 2.0


def test_debug_nans_for_a_scalar_result_of_numba_code(debug_nans):
    # Numba gives a 0-d result as a Python float, which the check did not look at: jit(f)(5.)
    # returned nan with debug_nans on (the python backend's 0-d arrays were checked)
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", "numba")
    try:
        with pytest.raises(FloatingPointError, match="invalid value encountered in log"):
            astjax.jit(_log_of_a_scalar)(5.0)
    finally:
        astjax.config.update("astjax_jit_backend", before)
    with pytest.raises(FloatingPointError):
        dispatch.check_nans(float("nan"), "x.py:1")


def _reciprocal(x):
    y = 1.0 / x  # the Inf's origin
    return y * 2.0


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_debug_infs(backend):
    # The Sharp Bits: "use the jax_debug_nans and jax_debug_infs flags"; astjax had no
    # debug_infs (AttributeError: astjax.config has no option 'jax_debug_infs')
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", backend)
    astjax.config.update("jax_debug_infs", True)
    try:
        assert astjax.config.debug_infs and not astjax.config.debug_nans
        with pytest.raises(FloatingPointError, match=r"Inf.*jnp.exp \(debug_infs is on\)"):
            jnp.exp(jnp.float32([1.0, 100.0]))
        zeros = jnp.zeros(2)
        assert np.isnan(np.asarray(zeros / zeros)).all()  # NaNs are debug_nans's
        f = astjax.jit(_reciprocal)
        np.testing.assert_allclose(f(np.float32([2.0])), [1.0])
        origin = _reciprocal.__code__.co_firstlineno + 1
        with pytest.raises(FloatingPointError, match=rf"{HERE}:{origin}: divide by zero"):
            f(np.float32([0.0, 1.0]))
        with pytest.raises(FloatingPointError, match=rf"{HERE}:{origin}: divide by zero"):
            f(0.0)
        with astjax.debug_infs(False):
            assert np.isinf(np.asarray(f(np.float32([0.0])))).all()
        assert astjax.config.jax_debug_infs
    finally:
        astjax.config.update("jax_debug_infs", False)
        astjax.config.update("astjax_jit_backend", before)
    assert np.isinf(np.asarray(jnp.exp(jnp.float32([100.0])))).all()


# --- jit on top of the runtime -----------------------------------------------------------------

def _double_plus_one(x):
    return x * 2.0 + 1.0


def test_jit_results_are_pending_then_right(async_on):
    f = astjax.jit(_double_plus_one)
    x = np.arange(4, dtype=np.float32)
    f(x).block_until_ready()  # compiled; the next call goes through the queue
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), x * 2 + 1)


def test_jit_donate_argnums_deletes_the_argument():
    f = astjax.jit(_double_plus_one, donate_argnums=0)
    x = astjax.device_put(np.arange(4, dtype=np.float32))
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), np.arange(4) * 2 + 1)
    assert x.is_deleted()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)


def test_jit_records_compiles_and_cache_hits(tmp_path):
    import glob
    import gzip
    import json
    f = astjax.jit(_double_plus_one)
    with astjax.profiler.trace(tmp_path):
        f(np.ones(3, np.float32))
        f(np.ones(5, np.float32))  # a new size: same compiled version
    (path,) = glob.glob(os.path.join(str(tmp_path), "plugins", "profile", "*", "*.json.gz"))
    with gzip.open(path, "rt") as fh:
        names = [e["name"] for e in json.load(fh)["traceEvents"]]
    assert names.count("compile _double_plus_one") == 1
    assert names.count("cache hit _double_plus_one") == 1


def _decay(x, v):
    return x * 0.5 + v


def test_jit_writes_its_result_into_a_donated_buffer(numba_backend):
    f = astjax.jit(_decay, donate_argnums=0)
    v = np.ones(6, np.float32)
    for _ in range(2):
        x = astjax.device_put(np.arange(6, dtype=np.float32))
        address = x._value.__array_interface__["data"][0]  # no reference kept
        y = np.asarray(f(x, v))
        np.testing.assert_allclose(y, np.arange(6) * 0.5 + 1)
        assert y.__array_interface__["data"][0] == address  # the same memory, reused
        assert x.is_deleted()


def _address(a):
    return a._value.__array_interface__["data"][0]


def _sgd(params, grads):
    return {"w": params["w"] - 0.1 * grads["w"], "b": params["b"] - 0.1 * grads["b"]}


def test_jit_reuses_the_buffers_of_a_donated_pytree(numba_backend):
    f = astjax.jit(_sgd, donate_argnums=0)
    grads = {"w": np.ones((3, 4), np.float32), "b": np.full(4, 2, np.float32)}
    for _ in range(2):
        params = {"w": astjax.device_put(np.arange(12, dtype=np.float32).reshape(3, 4)),
                  "b": astjax.device_put(np.zeros(4, np.float32))}
        addresses = {k: _address(v) for k, v in params.items()}
        out = f(params, grads)
        np.testing.assert_allclose(out["w"], np.arange(12).reshape(3, 4) - 0.1, rtol=1e-6)
        np.testing.assert_allclose(out["b"], np.full(4, -0.2), rtol=1e-6)
        assert {k: _address(v) for k, v in out.items()} == addresses
        assert all(v.is_deleted() for v in params.values())


def _reads_around_the_write(x):
    tripled = x * 3.0  # read once, later: runs inside the loop of `both`
    y = x + 1.0        # x's last reader by position, but not by run time
    both = tripled + y
    return y, both


def _view_then_write(x):
    tail = x[1:]  # a view of x: x's buffer must survive
    return x + 1.0, tail


def test_donation_never_overwrites_a_buffer_read_later(numba_backend):
    base = np.arange(5, dtype=np.float32)
    x = astjax.device_put(base.copy())
    address = _address(x)
    y, both = astjax.jit(_reads_around_the_write, donate_argnums=0)(x)
    np.testing.assert_allclose(y, base + 1)
    np.testing.assert_allclose(both, base * 3 + base + 1)
    assert _address(both) == address  # the loop that reads x last writes into it
    y, tail = astjax.jit(_view_then_write, donate_argnums=0)(astjax.device_put(base.copy()))
    np.testing.assert_allclose(y, base + 1)
    np.testing.assert_allclose(tail, base[1:])


def _double_then_grow(x, v, k):
    return x * 2.0, v[:k] + v  # v[:k] is f32[_]: size 1 only shows at run time


def test_a_size_one_broadcast_after_a_donated_write_is_a_clear_error(numba_backend):
    f = astjax.jit(_double_then_grow, donate_argnums=0)
    v = np.arange(3, dtype=np.float32)
    x = astjax.device_put(np.ones(4, np.float32))
    address = _address(x)
    y, z = f(x, v, 3)
    assert _address(y) == address
    np.testing.assert_allclose(z, v * 2)
    with pytest.raises(ValueError, match=r"test_runtime.py:\d+: operands .* donate_argnums"):
        f(astjax.device_put(np.ones(4, np.float32)), v, 1)
    y, z = astjax.jit(_double_then_grow)(np.ones(4, np.float32), v, 1)  # no donation: broadcasts
    np.testing.assert_allclose(z, v[:1] + v)


# --- calls on pending Arrays: queued behind the work making them ----------------------------

def _pending(seconds, value, fn=lambda x: x):
    """An Array that a queued call (taking ``seconds``) is still computing: ``fn(value)``."""
    value = np.asarray(value, np.float32)
    out = dispatch.execute(slow(seconds, fn), [value],
                           ArrayType(np.dtype(np.float32), (False,) * value.ndim, False))
    assert not out.is_ready()
    return out


def test_a_call_on_pending_results_is_queued_not_waited(async_on):
    f = astjax.jit(_double_plus_one)
    f(np.zeros(3, np.float32))  # generated already
    x = _pending(0.5, [1.0, 2.0, 3.0])
    t0 = time.perf_counter()
    z = f(f(x))  # a chain of calls, as in a training loop
    assert time.perf_counter() - t0 < 0.25  # the producer takes 0.5 s
    assert not z.is_ready()
    np.testing.assert_allclose(np.asarray(z), (np.array([1, 2, 3]) * 2 + 1) * 2 + 1)


def test_a_failed_producer_fails_the_calls_queued_behind_it(async_on):
    f = astjax.jit(_double_plus_one)

    def broken(x):
        raise ValueError("the producer broke")
    x = dispatch.execute(slow(0.2, broken), [np.ones(2, np.float32)], F32)
    z = f(x)
    with pytest.raises(ValueError, match="the producer broke"):
        np.asarray(z)
    with pytest.raises(ValueError, match="the producer broke"):
        np.asarray(x)


def test_donating_a_pending_array_deletes_it_now(async_on):
    f = astjax.jit(_decay, donate_argnums=0)
    f(astjax.device_put(np.zeros(3, np.float32)), np.ones(3, np.float32))  # generated
    x = _pending(0.3, [2.0, 4.0, 6.0])
    y = f(x, np.ones(3, np.float32))
    assert x.is_deleted() and not y.is_ready()
    with pytest.raises(RuntimeError, match="deleted"):
        np.asarray(x)
    np.testing.assert_allclose(np.asarray(y), [2.0, 3.0, 4.0])


def _squeeze_twice(x):
    return jnp.squeeze(x) * 2.0


def test_a_size_one_dim_the_type_did_not_promise_is_handled(async_on):
    """The producer's type says f32[_]; its value has shape (1,): the consumer, generated
    for f32[_], reruns for f32[1], so squeeze removes the dim as NumPy does."""
    f = astjax.jit(_squeeze_twice)
    x = _pending(0.2, [3.0, 4.0], fn=lambda v: v[:1])
    y = f(x)
    assert np.asarray(y).shape == () and float(y) == 6.0


def test_numba_calls_on_pending_results_reuse_a_donated_buffer(numba_backend, async_on):
    f = astjax.jit(_decay, donate_argnums=0)
    v = np.ones(6, np.float32)
    f(astjax.device_put(np.zeros(6, np.float32)), v)  # Numba compiles now, synchronously
    addresses = []

    def produce(x):
        out = x * 2.0
        addresses.append(out.__array_interface__["data"][0])
        return out
    x = _pending(0.3, np.arange(6), fn=produce)
    y = f(f(x, v), v)
    assert not y.is_ready()
    np.testing.assert_allclose(np.asarray(y), (np.arange(6) * 2 * 0.5 + 1) * 0.5 + 1)
    assert _address(y) == addresses[0]  # both calls wrote into the producer's buffer


# --- disable_jit -------------------------------------------------------------------------------

_CALLS = []


def _logs_its_calls(x, n):
    _CALLS.append(n)  # a Python side effect: compiled code could not run it
    if x.sum() > 0:
        return x * n
    return -x


def test_disable_jit_runs_jitted_functions_in_python():
    # JAX's debugging page: config.update("jax_disable_jit", True) (or `with
    # jax.disable_jit():`) makes jit(f)(x) call f in Python, so print and breakpoint() work;
    # astjax had no such option (AttributeError)
    f = astjax.jit(_logs_its_calls, static_argnums=1)
    x = np.float32([1.0, 2.0])
    del _CALLS[:]
    astjax.config.update("jax_disable_jit", True)
    try:
        np.testing.assert_allclose(f(x, 3), [3.0, 6.0])
        np.testing.assert_allclose(f(-x, 3), x)
        assert _CALLS == [3, 3]
        gx, gk = astjax.jit(astjax.grad(lambda v, k: jnp.sum(v * k), argnums=(0, 1),
                                        allow_int=True))(x, 2)
        np.testing.assert_allclose(gx, [2.0, 2.0])
        assert gk.dtype == astjax.dtypes.float0
    finally:
        astjax.config.update("jax_disable_jit", False)
    with astjax.disable_jit():
        f(x, 4)
        assert astjax.config.jax_disable_jit
    assert _CALLS == [3, 3, 4] and not astjax.config.jax_disable_jit
    with pytest.raises(astjax._src.errors.UserCodeError, match="append"):
        f(x, 5)  # compiled again: the side effect is not compilable
