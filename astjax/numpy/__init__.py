"""``astjax.numpy``: the NumPy API. Each function is a registered op (``np.sin`` inside a
transformed function is the same op as ``jnp.sin``), except a few written with those ops
(``sort``, ``take_along_axis``, ``select``, ``piecewise``, ``linalg.norm``, and those in
``_composites``: ``diff``, ``isclose``, ``triu``, ...), which the compiler reads like user code.
"""
import numpy as _np

from .._src.ops import registry as _registry
from .._src.runtime.array import Array as ndarray  # noqa: F401

globals().update(_registry.NAMESPACE)

# dtypes and constants, as in jax.numpy
from .._src.scalar_types import (  # noqa: E402,F401
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64,
    complex64, complex128)
dtype, finfo, iinfo = _np.dtype, _np.finfo, _np.iinfo
issubdtype, integer, floating, inexact, number = (
    _np.issubdtype, _np.integer, _np.floating, _np.inexact, _np.number)
pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, None, _np.euler_gamma

# plain functions written in astjax.numpy (the compiler reads their source), not ops
from ._sorting import sort, take_along_axis  # noqa: E402,F401
from ._select import piecewise, select  # noqa: E402,F401
from ._composites import (  # noqa: E402,F401
    allclose, deg2rad, degrees, diagonal, diff, ediff1d, heaviside, hypot, isclose, kron,
    logaddexp, logaddexp2, nanmax, nanmean, nanmin, nansum, polyval, rad2deg, radians, sinc,
    trapezoid, tril, triu)
from ._composites2 import (  # noqa: E402,F401
    average, convolve, corrcoef, correlate, cov, cumulative_prod, cumulative_sum, interp, median,
    nancumprod, nancumsum, nanmedian, nanpercentile, nanquantile, pad, percentile, ptp, quantile,
    searchsorted)
from ._math_extra import *  # noqa: E402,F401,F403
from ._array_building import *  # noqa: E402,F401,F403
from ._statistics import *  # noqa: E402,F401,F403
from ._vectorize import *  # noqa: E402,F401,F403
from ._polynomial_extra import *  # noqa: E402,F401,F403
from ._bits_extra import *  # noqa: E402,F401,F403
from ._misc_extra import *  # noqa: E402,F401,F403
from ._numpy_names import *  # noqa: E402,F401,F403  (eager only: not aliased below)
from ._ufunc import frompyfunc, ufunc  # noqa: E402,F401
from . import _array_building, _math_extra, _statistics, _vectorize  # noqa: E402
from . import _bits_extra, _misc_extra, _polynomial_extra, _setops  # noqa: E402
from . import fft, linalg  # noqa: E402,F401
from . import _methods  # noqa: E402,F401  (x.sort(), x.take(), ...)
from ._masked_reductions import KEYWORDS as _KEYWORDS  # noqa: E402

for _name, (_keywords, _fn) in _KEYWORDS.items():  # jnp.sum(x, where=m, initial=0.0)
    _registry.REGISTRY[_name].keyword_function = (frozenset(_keywords), _fn)
_registry.REGISTRY["where"].keyword_function = (  # jnp.where(c, size=n): nonzero's
    frozenset({"size", "fill_value"}), _setops.where)
_registry.REGISTRY["repeat"].keyword_function = (
    frozenset({"total_repeat_length"}), _misc_extra.repeat)

for _np_fn, _fn in ((_np.sort, sort), (_np.take_along_axis, take_along_axis),
                    (_np.select, select),
                    (_np.piecewise, piecewise)) + tuple(
        (getattr(_np, _name), globals()[_name])
        for _name in (_composites.__all__ + _composites2.__all__ + _math_extra.__all__
                      + _array_building.__all__ + _statistics.__all__
                      + _vectorize.__all__ + _polynomial_extra.__all__
                      + _bits_extra.__all__ + _misc_extra.__all__)
        if hasattr(_np, _name)  # np.trapezoid is new in NumPy 2.0
        and not isinstance(getattr(_np, _name), type)):  # np.bool stays np.bool
    _registry.register_function_alias(_np_fn, _fn)  # np.sort in your code is jnp.sort
for _name in fft.__all__:  # np.fft.rfft in your code is jnp.fft.rfft
    _registry.register_function_alias(getattr(_np.fft, _name), getattr(fft, _name))
for _name in linalg.__all__:  # np.linalg.solve is jnp.linalg.solve (np.linalg.outer, which
    _fn = getattr(_np.linalg, _name, None)  # may be np.outer itself, stays jnp.outer)
    if _fn is not None and _fn is not getattr(_np, _name, None):
        _registry.register_function_alias(_fn, getattr(linalg, _name))


def __getattr__(name):
    raise AttributeError(f"astjax.numpy has no function {name!r} yet")
