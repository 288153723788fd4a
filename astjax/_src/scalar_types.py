"""``jnp.float32`` and friends, as in JAX: a dtype wherever one is accepted
(``np.dtype(jnp.float32)``, ``x.astype(jnp.int32)``, ``x.dtype == jnp.float32``) and, called,
a 0-d astjax array of that dtype (``jnp.int32(3)``), where NumPy's type would give a NumPy
scalar that then follows NumPy's promotion (``np.float32(2) * np.int32(3)`` is float64).
In compiled code a call is ``astype`` (ir/infer.py)."""
import numpy as np


class ScalarType(type):
    def __call__(cls, x):
        from .ops.registry import NAMESPACE
        return NAMESPACE["asarray"](x, dtype=cls.dtype)

    def __eq__(cls, other):
        return cls is other or cls.dtype.type == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"astjax.numpy.{cls.__name__}"


def _scalar_type(numpy_type, name=None):
    return ScalarType(name or numpy_type.__name__, (), {"dtype": np.dtype(numpy_type)})


bool_ = _scalar_type(np.bool_, "bool_")
int8, int16, int32, int64 = (_scalar_type(t) for t in (np.int8, np.int16, np.int32, np.int64))
uint8, uint16, uint32, uint64 = (_scalar_type(t)
                                 for t in (np.uint8, np.uint16, np.uint32, np.uint64))
float16, float32, float64 = (_scalar_type(t) for t in (np.float16, np.float32, np.float64))
complex64, complex128 = _scalar_type(np.complex64), _scalar_type(np.complex128)
