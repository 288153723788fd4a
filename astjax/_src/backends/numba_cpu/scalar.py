"""Scalar source for one element of an elementwise op, in exactly JAX's dtypes.

Numba types scalar arithmetic like NumPy's old value-based rules
(``float32 * 2.0`` and ``int32 + int32`` widen), so constants are typed and
results whose Numba type could differ from the op's dtype are cast back.
"""
import re

import numpy as np

from ...ops.conversions import convert
from ...ops.registry import REGISTRY, wrapped_int

# ops whose Numba result already has the operands' dtype for float operands
_FLOAT_EXACT = {"add", "subtract", "multiply", "true_divide", "negative", "positive", "abs",
                "square", "reciprocal", "maximum", "minimum", "where", "sqrt", "exp", "log",
                "sin", "cos", "tanh", "floor", "ceil", "trunc", "stop_gradient"}
# np.<name>(x) on a scalar inside njit
_NUMPY_UNARY = {"exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "cbrt", "sin",
                "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                "arccosh", "arctanh", "floor", "ceil", "trunc", "rint", "sign", "isnan",
                "isinf", "isfinite", "signbit", "conjugate"}
# vectorizable float32/float64 kernels (backends/mathlib.py); libm calls stop LLVM's SIMD
_MATHLIB = {"exp", "log", "log1p", "expm1", "tanh", "sin", "cos"}
_INFIX = {"add": "+", "subtract": "-", "multiply": "*", "true_divide": "/", "floor_divide": "//",
          "remainder": "%", "power": "**", "less": "<", "less_equal": "<=", "greater": ">",
          "greater_equal": ">=", "equal": "==", "not_equal": "!=", "bitwise_and": "&",
          "bitwise_or": "|", "bitwise_xor": "^"}


def typed_literal(value, dtype):
    """A Python constant as source of a ``dtype`` scalar."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return repr(bool(value))
    if isinstance(value, np.generic):
        value = value.item()
    if dtype.kind in "iu":  # as JAX converts: -1 to uint8 wraps to 255, floats saturate
        value = wrapped_int(int(value), dtype) if isinstance(value, (int, np.integer)) \
            else convert(value, dtype).item()
    if isinstance(value, complex) and not np.isfinite(value):  # repr: (nan+infj)
        text = f"complex({_float_text(value.real)}, {_float_text(value.imag)})"
    else:
        text = _float_text(value) if isinstance(value, float) else repr(value)
    return f"np.{dtype.name}({text})"


def _float_text(value):
    if np.isfinite(value):
        return repr(value)
    return "np.nan" if np.isnan(value) else ("np.inf" if value > 0 else "-np.inf")


def _is_literal(text):
    """Whether scalar source ``text`` is a constant that typed_literal wrote."""
    return re.fullmatch(r"np\.\w+\([-\w.+']+\)|True|False", text) is not None


def cast(text, from_dtype, to_dtype):
    """Source converting scalar ``text`` of ``from_dtype`` to ``to_dtype``."""
    from_dtype, to_dtype = np.dtype(from_dtype), np.dtype(to_dtype)
    if from_dtype == to_dtype:
        return text
    if to_dtype.kind == "b":
        return f"({text} != 0)"
    if from_dtype.kind == "f" and to_dtype.kind in "iu":
        return f"_rt.float_to_int({text}, {integer_range(to_dtype)})"
    return f"np.{to_dtype.name}({text})"


def integer_range(dtype):
    """``np.int32, lo, hi``: the arguments naming an integer type for runtime.float_to_int."""
    info = np.iinfo(dtype)
    return f"np.{np.dtype(dtype).name}, {info.min}, {info.max}"


def needs_result_cast(name, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return False
    if dtype.kind in "fc" and dtype.itemsize >= 4 and name in _FLOAT_EXACT:
        return False
    return not (dtype in (np.float64, np.int64, np.complex128) and name in _INFIX)


def scalar_op(name, args, out_dtype, in_loop=True):
    """Source of ``name`` applied to scalar source ``args`` (already in the operand dtype).
    Outside loop nests (scalar code) libm beats mathlib, whose gain is vectorizing: a
    1000-step scalar sin/cos loop ran in 56 us with mathlib, 36 us with libm."""
    real_float = np.dtype(out_dtype) in (np.float32, np.float64)
    if name in _MATHLIB and real_float:
        return f"_ml.{name}({args[0]})" if in_loop else f"np.{name}({args[0]})"
    if name == "fma":
        if real_float:
            return f"_ml.fma({args[0]}, {args[1]}, {args[2]})"
        return f"np.{np.dtype(out_dtype).name}({args[0]} * {args[1]} + {args[2]})"
    if name == "power" and real_float:
        return f"_ml.power({args[0]}, {args[1]})"
    if name == "power" and np.dtype(out_dtype).kind in "iu" and not _is_literal(args[1]):
        # an integer power by an array: JAX's _pow_int_int reads the exponent's low 6
        # bits, and 0 ** y is 0 for y != 0 (ops/elementwise._power)
        x, y = args
        return (f"np.{np.dtype(out_dtype).name}(0 if {x} == 0 and {y} != 0 "
                f"else {x} ** ({y} & 63))")
    if name == "remainder" and real_float:  # JAX's signed zeros (runtime.float_remainder)
        text = f"_rt.float_remainder({args[0]}, {args[1]})"
    elif name == "floor_divide" and real_float:
        text = f"_rt.float_floor_divide({args[0]}, {args[1]}, {typed_literal(1, out_dtype)})"
    elif name == "floor_divide" and np.dtype(out_dtype).kind in "iu":
        # x // 0 as JAX's (ops/elementwise._floor_divide): all ones unsigned, else -1 or -2
        x, y = args
        zero = np.iinfo(out_dtype).max if np.dtype(out_dtype).kind == "u" else \
            f"(-1 if {x} == 0 else -2)"
        text = f"({zero} if {y} == 0 else {x} // {y})"
    elif name in _INFIX:
        text = f"({args[0]} {_INFIX[name]} {args[1]})"
    elif name == "sign" and np.dtype(out_dtype).kind == "u":  # np.sign reads 255 as -1
        text = f"({args[0]} > 0)"
    elif name in _NUMPY_UNARY:
        text = f"np.{name}({args[0]})"
    elif name in ("maximum", "minimum"):
        text = f"_rt.{name}({args[0]}, {args[1]})"
    elif name == "ldexp":  # exact: NumPy's ldexp takes an int32 exponent
        text = f"np.ldexp({args[0]}, np.int32({args[1]}))"
    elif name in ("arctan2", "nextafter"):
        text = f"np.{name}({args[0]}, {args[1]})"
    elif name == "negative":
        text = f"(-{args[0]})"
    elif name in ("positive", "stop_gradient"):
        text = args[0]
    elif name == "abs":
        text = f"abs({args[0]})"
    elif name == "square":
        text = f"({args[0]} * {args[0]})"
    elif name == "reciprocal":
        text = f"({typed_literal(1, out_dtype)} / {args[0]})"
    elif name == "logical_and":
        text = f"({args[0]} and {args[1]})"
    elif name == "logical_or":
        text = f"({args[0]} or {args[1]})"
    elif name == "logical_xor":
        text = f"({args[0]} != {args[1]})"
    elif name == "logical_not":
        text = f"(not {args[0]})"
    elif name == "invert":
        text = f"(not {args[0]})" if np.dtype(out_dtype).kind == "b" else f"(~{args[0]})"
    elif name in ("erf", "erfc"):
        text = f"math.{name}({args[0]})"
    elif name == "real":
        text = f"{args[0]}.real"
    elif name == "imag":
        text = f"{args[0]}.imag"
    elif name in ("left_shift", "right_shift"):
        # NumPy and XLA: amounts outside [0, bits) give 0, or -1 for a negative value
        # shifted right; LLVM's shifts are undefined there
        dtype = np.dtype(out_dtype)
        bits = dtype.itemsize * 8
        t = f"np.{dtype.name}"
        x, y = args
        if name == "left_shift":
            text = f"({t}({x} << {y}) if 0 <= {y} < {bits} else {t}(0))"
        elif dtype.kind == "u":
            text = f"({t}({x} >> {y}) if 0 <= {y} < {bits} else {t}(0))"
        else:
            text = f"({t}({x} >> {y}) if 0 <= {y} < {bits} else {t}(-1 if {x} < 0 else 0))"
        return text
    elif name == "where":
        text = f"({args[1]} if {args[0]} else {args[2]})"
    elif name in REGISTRY and "numba_scalar" in REGISTRY[name].rules:  # ops/special.py's
        text = REGISTRY[name].rules["numba_scalar"](args, out_dtype)
    else:
        return None
    if needs_result_cast(name, out_dtype):
        text = f"np.{np.dtype(out_dtype).name}({text})"
    return text
