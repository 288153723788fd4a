"""astjax.numpy.fft: values and dtypes against NumPy (eagerly and under jit), JAX's
errors, derivatives against finite differences and against JAX 0.10.2's values (literals
from a run of jax.value_and_grad with 64-bit types on), vmap, the Numba kernels against
NumPy for several lengths, and one Numba program (with its gradient)."""
import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax._src.backends.numba_cpu import fft_kernels
from astjax._src.errors import UserCodeError
from astjax.test_util import check_grads

R = np.random.default_rng(0)
X = R.normal(size=(3, 6)).astype(np.float32)
Z = (R.normal(size=(3, 6)) + 1j * R.normal(size=(3, 6))).astype(np.complex64)
M = R.normal(size=(3, 4, 5)).astype(np.float32)


def _close(got, want, dtype):
    assert got.dtype == dtype, (got.dtype, dtype)
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    scale = max(np.max(np.abs(want), initial=0.0), 1.0)
    np.testing.assert_allclose(np.asarray(got), want, rtol=0, atol=tol * scale)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"])
@pytest.mark.parametrize("n,axis,norm", [(None, -1, None), (4, -1, "ortho"),
                                         (9, 0, "forward"), (5, 1, "backward")])
def test_1d_transforms_match_numpy(name, n, axis, norm):
    a = X if name in ("rfft", "ihfft") else Z
    want = getattr(np.fft, name)(a.astype(np.complex128) if a is Z else a.astype(np.float64),
                                 n=n, axis=axis, norm=norm)
    dtype = np.float32 if name in ("irfft", "hfft") else np.complex64
    _close(getattr(jnp.fft, name)(a, n=n, axis=axis, norm=norm), want, dtype)
    jitted = astjax.jit(lambda a: getattr(jnp.fft, name)(a, n=n, axis=axis, norm=norm))
    _close(jitted(a), want, dtype)


@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn",
                                  "fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("s,axes", [(None, None), ((3, 6), (0, 2)), (None, (2, 0)),
                                    ((2, 4), None)])
def test_nd_transforms_match_numpy(name, s, axes):
    if name.endswith("2") and axes is None:
        axes = (-2, -1)
    # (NumPy 2 wants the axes when s is given: the last len(s), as JAX takes them)
    np_axes = axes if s is None or axes is not None else tuple(range(-len(s), 0))
    want = getattr(np.fft, name)(M.astype(np.float64), s=s, axes=np_axes)
    dtype = np.float32 if name.startswith("irfft") else np.complex64
    _close(getattr(jnp.fft, name)(M, s=s, axes=axes), want, dtype)
    _close(astjax.jit(lambda m: getattr(jnp.fft, name)(m, s=s, axes=axes))(M), want, dtype)


def test_result_dtypes_are_jaxs(x64):
    # JAX 0.10.2 with x64: int32/bool -> complex64, int64/float64 -> complex128
    for dtype, complex_ in ((np.int32, np.complex64), (np.bool_, np.complex64),
                            (np.int64, np.complex128), (np.float32, np.complex64),
                            (np.float64, np.complex128)):
        a = np.ones(4, dtype)
        assert jnp.fft.fft(a).dtype == complex_
        assert jnp.fft.rfft(a).dtype == complex_
        assert jnp.fft.irfft(a).dtype == np.finfo(complex_).dtype
    _close(jnp.fft.fft(Z.astype(np.complex128)), np.fft.fft(Z.astype(np.complex128)),
           np.complex128)
    assert jnp.fft.fftfreq(4).dtype == np.float64


def test_frequencies_and_shifts():
    _close(jnp.fft.fftfreq(5), np.fft.fftfreq(5), np.float32)
    _close(jnp.fft.fftfreq(6, 0.25), np.fft.fftfreq(6, 0.25), np.float32)
    _close(jnp.fft.rfftfreq(7, 0.5), np.fft.rfftfreq(7, 0.5), np.float32)
    _close(jnp.fft.rfftfreq(8), np.fft.rfftfreq(8), np.float32)
    for axes in (None, 1, (0, 2), [-1]):
        np.testing.assert_array_equal(jnp.fft.fftshift(M, axes), np.fft.fftshift(M, axes))
        np.testing.assert_array_equal(jnp.fft.ifftshift(M, axes), np.fft.ifftshift(M, axes))
    # under jit the length is a run-time value: no recompile for a new size
    freqs = astjax.jit(lambda a, d: jnp.fft.fftshift(jnp.fft.fftfreq(a.shape[0], d)))
    _close(freqs(np.zeros(5, np.float32), 0.1), np.fft.fftshift(np.fft.fftfreq(5, 0.1)), np.float32)
    _close(freqs(np.zeros(8, np.float32), 0.1), np.fft.fftshift(np.fft.fftfreq(8, 0.1)), np.float32)
    shifted = astjax.jit(lambda m: jnp.fft.ifftshift(m, axes=(0, 2)))(M)
    np.testing.assert_array_equal(shifted, np.fft.ifftshift(M, axes=(0, 2)))


def test_empty_transforms_as_jax():
    # JAX 0.10.2 gives empty results where the length is 0 (NumPy raises): irfft of one bin
    # (n = 2 * (1 - 1)), hfft likewise, fft and ifft of an empty axis
    for fn, a, dtype in ((jnp.fft.irfft, np.ones((2, 1), np.complex64), np.float32),
                         (jnp.fft.hfft, np.ones((2, 1), np.complex64), np.float32),
                         (jnp.fft.irfft, np.ones((2, 0), np.complex64), np.float32),
                         (jnp.fft.fft, np.ones((2, 0), np.complex64), np.complex64),
                         (jnp.fft.ifft, np.ones((2, 0), np.float32), np.complex64)):
        for f in (fn, astjax.jit(fn)):
            out = f(a)
            assert out.shape == (2, 0) and out.dtype == dtype


def test_numpy_fft_in_compiled_code_is_jnp_fft():
    got = astjax.jit(lambda a: np.fft.rfft(a, n=8) * np.fft.rfftfreq(8))(X)
    _close(got, np.fft.rfft(X.astype(np.float64), n=8) * np.fft.rfftfreq(8), np.complex64)


def test_errors():
    with pytest.raises(ValueError, match="Invalid norm value"):
        jnp.fft.fft(Z, norm="backwards")
    with pytest.raises(ValueError, match="does not support repeated axes"):
        jnp.fft.fftn(M, axes=(0, 0))
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        jnp.fft.fftn(M, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        jnp.fft.fft2(M, axes=(0, 1, 2))
    with pytest.raises(ValueError, match="does not support multiple axes"):
        jnp.fft.fft(M, axis=(0, 1))
    with pytest.raises(ValueError, match="Shape should be positive"):
        jnp.fft.rfftn(M, s=(0, 2))
    with pytest.raises(TypeError, match="Shape should be positive"):
        jnp.fft.fft(Z, n=0)
    with pytest.raises(TypeError, match="only real valued inputs"):
        jnp.fft.rfft(Z)
    with pytest.raises(UserCodeError, match=r"test_fft.py:\d+.*norm value"):
        astjax.jit(lambda a: jnp.fft.ifft(a, norm="orthogonal"))(Z)


# jax.value_and_grad of each loss at these inputs, jax 0.10.2, x64
_x = np.array([0.5, -1.25, 2.0, 0.75, -0.3, 1.1])
_z = np.array([1.0 - 0.5j, 0.25 + 2.0j, -1.5 + 0.3j, 0.8 - 1.1j])
_m = np.array([[0.3, -0.7, 1.2], [2.0, 0.1, -0.4]])
_w = np.arange(1.0, 9.0)
LOSSES = {
    "rfft_power": (lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)) ** 2), _x),
    "rfft_n8_ortho": (lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x, n=8, norm="ortho")) ** 2
                                        * _w[:5]), _x),
    "fft_n4_weighted": (lambda x: jnp.sum(jnp.abs(jnp.fft.fft(x, n=4)) * _w[:4]), _x),
    "irfft_n7_sin": (lambda z: jnp.sum(jnp.sin(jnp.fft.irfft(z, n=7)) * _w[:7]), _z),
    "irfft_default": (lambda z: jnp.sum(jnp.fft.irfft(z, norm="forward") ** 3), _z),
    "ifft_complex": (lambda z: jnp.sum(jnp.real(jnp.fft.ifft(z, n=5) * _w[:5]) ** 2), _z),
    "hfft": (lambda z: jnp.sum(jnp.fft.hfft(z) * _w[:6]), _z),
    "ihfft": (lambda x: jnp.sum(jnp.abs(jnp.fft.ihfft(x, norm="ortho")) ** 2 * _w[:4]), _x),
    "rfft2": (lambda m: jnp.sum(jnp.abs(jnp.fft.rfft2(m, s=(3, 4))) * _w[:3]), _m),
    "irfftn": (lambda m: jnp.sum(jnp.cos(jnp.fft.irfftn(m, axes=(0, 1)))), _m),
    "fftn_axes": (lambda m: jnp.sum(jnp.abs(jnp.fft.fftn(m, s=(2, 5), axes=(1, 0))) ** 2), _m),
}
JAX = {
    'rfft_power': (28.225, [7.4, -6.299999999999996, 16.4, 5.699999999999999,
                            2.6000000000000014, 7.799999999999999]),
    'rfft_n8_ortho': (14.150683258569794, [3.646015510839147, -6.4899494936611655,
                                           7.615685424949237, 0.07573593128807143,
                                           -0.9460155108391481, 2.539949493661166]),
    'fft_n4_weighted': (26.0, [0.40000000000000036, -6.800000000000001, 7.6,
                               2.8000000000000007, 0.0, 0.0]),
    'irfft_n7_sin': (5.9289419738244815, [(3.0941505888985743 - 0j),
                                          (-0.7361663184470759 - 0.4738531617996856j),
                                          (0.3104479864009197 - 1.311648626459605j),
                                          (-1.668534295933368 - 1.198192387321494j)]),
    'irfft_default': (379.6349999999999, [(260.0099999999999 - 0j),
                                          (-52.20000000000003 - 348.1199999999999j),
                                          (-157.58999999999992 + 25.200000000000045j),
                                          (-41.399999999999956 - 0j)]),
    'ifft_complex': (19.595311050308446, [(9.510653148225765 + 0j),
                                          (1.7668453129045567 - 8.646758479365358j),
                                          (-6.412171887017441 - 5.325871674658619j),
                                          (-6.412171887017441 + 5.325871674658619j)]),
    'hfft': (4.276159824632147, [(21 + 0j), (-6 + 10.392304845413264j),
                                 (-6 + 3.4641016151377544j), (-3 + 0j)]),
    'ihfft': (11.695416666666661, [2.758333333333333, -5.341666666666665, 6.683333333333331,
                                   0.058333333333333126, -0.2416666666666658,
                                   1.683333333333332]),
    'rfft2': (43.51884486816357, [[7.388858517852389, -7.870449695543259, 9.413152282199928],
                                  [12.599689335756576, -1.4393085913966874,
                                   1.3958950627145672]]),
    'irfftn': (7.588090052578686, [[-0.03672093248085452, 0.16850604855533763,
                                    -0.14396972509953382],
                                   [-0.24329663007737817, -0.030147761400351067,
                                    0.050355459303571014]]),
    'fftn_axes': (45.9, [[6.0, -14.0, 0.0], [40.0, 2.0, 0.0]]),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_jax(name, x64):
    f, a = LOSSES[name]
    value, grad = JAX[name]
    for fn in (astjax.value_and_grad(f), astjax.jit(astjax.value_and_grad(f))):
        v, g = fn(a)
        np.testing.assert_allclose(v, value, rtol=1e-12)
        np.testing.assert_allclose(g, np.array(grad), rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("name,order", [("rfft_n8_ortho", 2), ("irfft_n7_sin", 2),
                                        ("hfft", 2), ("ifft_complex", 1), ("rfft2", 1),
                                        ("fftn_axes", 1)])
def test_derivatives_against_finite_differences(name, order, x64):
    f, a = LOSSES[name]
    check_grads(f, (a,), order=order, modes=("fwd", "rev"))


def test_jvp_of_complex_output(x64):
    """jvp of the spectrum itself (linear: J v is the transform of v)."""
    v = R.normal(size=6)
    out, tangent = astjax.jvp(lambda x: jnp.fft.rfft(x, n=9, norm="ortho"), (_x,), (v,))
    np.testing.assert_allclose(tangent, np.fft.rfft(v, n=9, norm="ortho"), atol=1e-13)
    check_grads(lambda z: jnp.fft.ifft(z, n=3), (_z,), order=1, modes=("fwd", "rev"))


def test_vmap():
    f = lambda a: jnp.fft.rfft(a, n=5, axis=0)  # noqa: E731
    _close(astjax.vmap(f)(M), np.fft.rfft(M.astype(np.float64), n=5, axis=1), np.complex64)
    _close(astjax.vmap(f, in_axes=2)(M),
           np.moveaxis(np.fft.rfft(M.astype(np.float64), n=5, axis=0), 2, 0), np.complex64)
    # per-example gradients: |fft2(a)|^2 sums to 15 |a|^2 for a 3 x 5 example (Parseval)
    g = astjax.vmap(astjax.grad(lambda a: jnp.sum(jnp.abs(jnp.fft.fft2(a)) ** 2)))
    np.testing.assert_allclose(g(M[:, :3]), 2 * 15 * M[:, :3], rtol=1e-4)
    source = astjax.make_source(astjax.vmap(f))(M)
    assert "for b0 in range" not in source  # one batched call, no loop over examples


# --- Numba ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_numba_kernels_match_numpy(dtype):
    tol = 2e-6 if dtype == np.complex64 else 1e-13
    real = np.finfo(dtype).dtype
    for n in (1, 2, 3, 5, 8, 12, 17, 64):
        x = (R.normal(size=(2, n)) + 1j * R.normal(size=(2, n))).astype(dtype)
        for kind, fn in ((0, np.fft.fft), (1, np.fft.ifft)):
            for code, norm in ((0, "backward"), (1, "ortho"), (2, "forward")):
                got = fft_kernels.fft_rows(x, -1, kind, code, dtype)
                want = fn(x.astype(np.complex128), norm=norm)
                assert got.dtype == dtype
                np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max())
        for m in (n, n + 1, 2 * n):  # with cropping and zero-padding
            got = fft_kernels.rfft_rows(x.real, m, 0, dtype)
            want = np.fft.rfft(x.real.astype(np.float64), m)
            np.testing.assert_allclose(got, want, atol=tol * np.abs(want).max())
            got = fft_kernels.irfft_rows(x, m, 0, real)
            want = np.fft.irfft(x.astype(np.complex128), m)
            assert got.dtype == real
            np.testing.assert_allclose(got, want, atol=tol * max(np.abs(want).max(), 1.0))


def _program(x, z):
    spectrum = jnp.fft.rfft(x, n=8, norm="ortho")
    mixed = jnp.fft.ifft(spectrum * z[:, :5], axis=0)
    return jnp.fft.irfft(mixed, n=7), jnp.fft.fft2(z, s=(2, 12)), jnp.fft.rfft(x > 0, axis=0)


def _loss(x, z):
    back, spectrum, _ = _program(x, z)
    return jnp.sum(back ** 2) + jnp.sum(jnp.abs(spectrum))


@pytest.fixture(scope="module")
def on_numba():
    before = astjax.config.astjax_jit_backend
    astjax.config.update("astjax_jit_backend", "numba")
    yield astjax.jit(_program), astjax.jit(astjax.grad(_loss, argnums=(0, 1)))
    astjax.config.update("astjax_jit_backend", before)


def test_numba_program(on_numba):
    program, _ = on_numba
    got = program(X, Z)
    (compiled,) = program.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    spectrum = np.fft.rfft(X.astype(np.float64), n=8, norm="ortho")
    mixed = np.fft.ifft(spectrum * Z[:, :5], axis=0)
    _close(got[0], np.fft.irfft(mixed, n=7), np.float32)
    _close(got[1], np.fft.fft2(Z.astype(np.complex128), s=(2, 12)), np.complex64)
    _close(got[2], np.fft.rfft(X > 0, axis=0), np.complex64)  # a bool input (cast first)


def test_numba_gradient(on_numba):
    _, gradient = on_numba
    gx, gz = gradient(X, Z)
    (compiled,) = gradient.cache.values()
    assert compiled.backend == "numba", compiled.fallback_reason
    astjax.config.update("astjax_jit_backend", "python")
    try:
        wx, wz = astjax.jit(astjax.grad(_loss, argnums=(0, 1)))(X, Z)
    finally:
        astjax.config.update("astjax_jit_backend", "numba")
    np.testing.assert_allclose(gx, wx, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(gz, wz, rtol=1e-4, atol=1e-5)


def test_lax_fft():
    """lax.fft(x, fft_type, fft_lengths) is jnp.fft's n-D transform over the last
    len(fft_lengths) axes; values and the gradient are JAX 0.10.2's."""
    from astjax import lax
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(lax.fft(x, "RFFT", (3,)), np.fft.rfft(x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(lax.fft(x.astype(np.complex64), lax.FftType.FFT, (2, 3)),
                               np.fft.fftn(x), rtol=1e-6, atol=1e-5)
    np.testing.assert_allclose(lax.fft(np.fft.rfft(x).astype(np.complex64), "IRFFT", (3,)), x,
                               rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(astjax.jit(lambda v: lax.fft(v, "IFFT", (3,)))(
        x.astype(np.complex64)), np.fft.ifft(x), rtol=1e-6, atol=1e-6)
    power = astjax.grad(lambda v: jnp.sum(jnp.abs(lax.fft(v, "RFFT", (3,))) ** 2))
    np.testing.assert_allclose(power(x), [[3.0, 6.0, 9.0], [21.0, 24.0, 27.0]], rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown FFT type 'DCT'"):
        lax.fft(x, "DCT", (3,))
