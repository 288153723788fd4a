"""One place per op.

An ``Op`` holds every fact about one operation: its NumPy-level implementation
(what the python backend runs and eager mode calls), its abstract evaluation
rule (shape/dtype: types in, type out), how its operand dtypes are promoted,
and slots that later stages fill in beside it (jvp, vjp, batching, lowering).

Calling convention, shared by every op:
  * Every op is registered under its JAX name (``jnp.<name>``); extra public
    names go through ``register_name``; ``x.method()`` forms through
    ``register_method``; NumPy/math functions through ``aliases``.
  * ``impl(*operands, **params)`` gets NumPy arrays / Python scalars whose
    dtypes are already promoted, and returns NumPy values.
  * ``abstract_eval(*operand_types, **params)`` gets ``ir.types`` values for
    operands; params are static Python values, or types when dynamic (e.g. a
    reshape size computed at run time). It returns a type, or raises
    ``ShapeError`` with a message for the user.
Operands are the parameters of ``impl`` listed in ``operands``; everything
else is a param. ``static`` names params that must be known at generation time.
"""
import inspect

import numpy as np

from .. import dtypes
from ..errors import ShapeError
from ..ir.types import (ArrayType, ListType, SequenceType, Static, as_array_type, broadcast_ones,
                        is_numeric)

REGISTRY = {}        # name -> Op
NAMESPACE = {}       # public jnp name -> Op (the op's own name plus register_name extras)
METHODS = {}         # Array method name (x.sum) -> op name; the array is the first operand
# op name -> the operand it reads for its shape only, never its values
SHAPE_ONLY = {"cotangent_like": "z", "unbroadcast": "like", "full_like": "a",
              "zeros_like": "a", "ones_like": "a", "empty_like": "a"}
_BY_OBJECT = {}      # id(numpy/math function) -> Op, so np.sin resolves to the sin op
_OBJECTS = []        # keep aliased objects alive so ids stay unique


class Op:
    def __init__(self, name, impl, abstract_eval, *, operands=None, static=(), promote=None,
                 inexact=False, numeric=False, differentiable=True, infix=None, aliases=(),
                 raw_python_scalars=False):
        self.name = name
        self.impl = impl
        self.abstract_eval = abstract_eval
        self.signature = inspect.signature(impl)
        params = list(self.signature.parameters)
        self.operands = tuple(operands if operands is not None else params[:1])
        self.static = tuple(static)
        # names of operands promoted to one common dtype before impl (JAX's promote_args)
        self.promote = tuple(promote) if promote is not None else ()
        self.inexact = inexact          # promoted dtype is then made inexact (sin of an int)
        self.numeric = numeric          # a promoted bool becomes int32 (JAX's promote_args_numeric)
        self.adjust_promotion = None    # (operand types, dtype, weak) -> (dtype, weak): power's
        self.differentiable = differentiable
        self.infix = infix              # shown as `a + b` in generated source
        self.infix_when = None          # else: operand types -> whether NumPy's `a op b` is impl
        self.rules = {}                 # 'jvp', 'vjp', 'batch', 'numba', ... filled by later stages
        self.family = None              # "elementwise" for ops made by elementwise()
        # a function compiled in the op's place when its argument is a pytree (JAX's
        # stop_gradient maps over leaves): see astjax/lax.py
        self.tree_function = None
        # (keyword names, function): a call passing one of them (jnp.sum(x, where=m)) runs,
        # and compiles as, the function instead: see astjax/numpy/_masked_reductions.py
        self.keyword_function = None
        # impl types Python numbers itself (jnp.array([x16, 3.0]) keeps float16): no casts
        self.raw_python_scalars = raw_python_scalars
        kinds = {p.kind for p in self.signature.parameters.values()}
        # bind's fast path: positional arguments name the parameters in order
        self._plain = tuple(params) if kinds <= {inspect.Parameter.POSITIONAL_OR_KEYWORD} \
            else None
        self._required = sum(p.default is p.empty for p in self.signature.parameters.values())
        for obj in aliases:
            register_alias(obj, self)
        if name in REGISTRY:
            raise ValueError(f"op {name!r} registered twice")
        REGISTRY[name] = self
        NAMESPACE[name] = self

    def __repr__(self):
        return f"<op {self.name}>"

    # --- binding ---------------------------------------------------------------------------
    def bind(self, args, kwargs):
        """Match a call's arguments to (operands dict, params dict), in signature order."""
        plain = self._plain
        if plain is not None and not kwargs and self._required <= len(args) <= len(plain):
            operands, params = {}, {}
            for name, value in zip(plain, args):
                (operands if name in self.operands else params)[name] = value
            return operands, params
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise ShapeError(f"{self.name}(): {e}") from None
        operands, params = {}, {}
        for name, value in bound.arguments.items():
            kind = self.signature.parameters[name].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                value = tuple(value)
            (operands if name in self.operands else params)[name] = value
        return operands, params

    def arrange(self, bound):
        """Call arguments for ``bound`` (name -> value) in signature order: positional while
        no parameter is skipped (``*args`` spread), keywords after. Eager calls and
        generated source both call impls this way."""
        args, kwargs, positional = [], {}, True
        for name, p in self.signature.parameters.items():
            if name not in bound:
                positional = positional and p.kind is inspect.Parameter.VAR_POSITIONAL
                continue
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                args.extend(bound[name])
            elif positional and p.kind is not inspect.Parameter.KEYWORD_ONLY:
                args.append(bound[name])
            else:
                positional = False
                kwargs[name] = bound[name]
        return args, kwargs

    # --- typing ----------------------------------------------------------------------------
    def promoted_dtype(self, operand_types):
        """The ``(dtype, weak)`` that promoted operands are cast to, or None."""
        if not self.promote:
            return None
        typed = []
        for name in self.promote:
            t = operand_types.get(name)
            if t is None or (isinstance(t, Static) and t.value is None):  # not given (clip)
                continue
            if isinstance(t, ListType):  # built by append: one element type
                t = t.elt
            for leaf in (t.elts if isinstance(t, SequenceType) else (t,)):
                if not is_numeric(leaf):
                    raise ShapeError(f"{self.name}(): argument {name} must be an array, got {leaf}")
                a = as_array_type(leaf)
                typed.append((a.dtype, a.weak))
        if not typed:
            return None
        dtype, weak = dtypes.promote_types(*typed)
        if self.inexact:
            dtype, weak = dtypes.to_inexact(dtype, weak)
        elif self.numeric and dtype == dtypes.bool_:  # bool // bool is int32, even with x64
            dtype = dtypes.int32
        if self.adjust_promotion is not None:
            dtype, weak = self.adjust_promotion(operand_types, dtype, weak)
        return dtype, weak

    def infer(self, operand_types, params):
        """Output type for the given operand types and params (static values or types)."""
        for name in self.static:
            value = params.get(name)
            if isinstance(value, ArrayType):
                raise ShapeError(f"{self.name}(): {name} must be known when the code is "
                                 f"generated (a constant or a static argument), not computed")
        return self.abstract_eval(**operand_types, **params)

    # --- eager ----------------------------------------------------------------------------
    def keyword_call(self, kwargs):
        """The function standing for this op in a call with keywords ``kwargs``, or None."""
        if self.keyword_function is not None and not self.keyword_function[0].isdisjoint(kwargs):
            return self.keyword_function[1]
        return None

    def __call__(self, *args, **kwargs):
        from ..runtime.eager import apply_eagerly
        fn = self.keyword_call(kwargs)
        if fn is not None:
            return fn(*args, **kwargs)
        return apply_eagerly(self, args, kwargs)


def register_alias(obj, op):
    """Make a foreign callable (np.sin, math.sin) resolve to ``op`` in user code."""
    _OBJECTS.append(obj)
    _BY_OBJECT[id(obj)] = op


def register_name(public_name, op):
    """Also export ``op`` as ``jnp.<public_name>`` (jnp.divide for true_divide)."""
    NAMESPACE[public_name] = op


def register_method(method_name, op_name=None):
    """``x.method(...)`` means ``op(x, ...)`` on Arrays and in compiled code."""
    METHODS[method_name] = op_name or method_name


# Array method name (x.sort) -> the astjax.numpy function (not an op) it calls with the array
# first: filled by astjax/numpy/_methods.py
FUNCTION_METHODS = {}


def op_for_object(obj):
    return _BY_OBJECT.get(id(obj))


_FUNCTIONS = {}  # id(NumPy function) -> the astjax.numpy function (not an op) standing for it


def register_function_alias(obj, fn):
    """Make ``obj`` (np.sort) in user code call ``fn`` (jnp.sort, written with ops)."""
    _OBJECTS.append(obj)
    _FUNCTIONS[id(obj)] = fn


def function_for_object(obj):
    return _FUNCTIONS.get(id(obj))




# --- shared shape/dtype rules ----------------------------------------------------------------



def elementwise_rule(out_dtype=None):
    """Abstract eval for an n-ary elementwise op: broadcast ranks, dtype from promotion.

    ``out_dtype``: None for the promoted dtype, a dtype (comparisons give bool),
    or a function of the promoted dtype (abs of complex64 is float32).
    """
    def rule(*operand_types, _op):
        arrays = [as_array_type(t) for t in operand_types]
        ones = broadcast_ones(*arrays)
        dtype, weak = _op.promoted_dtype(dict(zip(_op.operands, operand_types)))
        if out_dtype is None:
            return ArrayType(dtype, ones, weak)
        if callable(out_dtype):
            return ArrayType(np.dtype(out_dtype(dtype)), ones, weak)
        return ArrayType(np.dtype(out_dtype), ones, False)
    return rule


def elementwise(name, impl, *, nin=1, out_dtype=None, inexact=False, numeric=False, aliases=(),
                infix=None, differentiable=True, dtype_check=None):
    """Register an elementwise op taking ``nin`` array operands and no params."""
    argnames = ["x", "y", "z", "w"][:nin]
    src = f"def {name}({', '.join(argnames)}): return _impl({', '.join(argnames)})"
    namespace = {"_impl": impl}
    exec(src, namespace)  # a wrapper with named operands, so signature binding works
    wrapper = namespace[name]
    wrapper.__doc__ = getattr(impl, "__doc__", None)
    op = None

    def abstract_eval(**named):
        types = [named[a] for a in argnames]
        if dtype_check is not None:  # on the dtype computed in: bool - 1.5 is fine, as in JAX
            dtype_check(name, op.promoted_dtype(named)[0])
        return rule(*types, _op=op)

    rule = elementwise_rule(out_dtype)
    op = Op(name, wrapper, abstract_eval, operands=argnames, promote=argnames, inexact=inexact,
            numeric=numeric, differentiable=differentiable, infix=infix, aliases=aliases)
    op.family = "elementwise"  # registry-driven tests and, later, batching rules use this
    op.numpy_reference = impl
    return op


def operand_casts(op, operand_types, runtime_scalar):
    """Which operands need an explicit cast before ``impl``, and to what dtype.

    Returns ``{name: dtype}``. After these casts NumPy computes in exactly the
    dtype the op's rule gives: promoted operands of another dtype are cast; a
    Python scalar literal is left to NumPy's weak-scalar rule (NEP 50) when a
    dynamic operand sets the dtype, and is typed otherwise (``np.sin(2.0)``
    and ``np.transpose(2.0)`` would be float64). ``runtime_scalar(name)``
    tells whether an operand is a Python scalar literal. Sequence operands
    (concatenate's tuple) are handled by the caller.
    """
    casts = {} if op.raw_python_scalars else {
        name: as_array_type(t).dtype for name, t in operand_types.items()
        if name not in op.promote and not isinstance(t, SequenceType)
        and is_numeric(t) and runtime_scalar(name)}
    target = op.promoted_dtype(operand_types)
    if target is None:
        return casts
    dtype = target[0]
    literals, has_dynamic = [], False
    for name in op.promote:
        t = operand_types.get(name)
        if t is None or isinstance(t, (SequenceType, ListType)):
            continue
        if runtime_scalar(name):
            literals.append(name)
        else:
            has_dynamic = True
            if as_array_type(t).dtype != dtype:
                casts[name] = dtype
    if not has_dynamic:
        casts.update({name: dtype for name in literals})
    casts.update({name: dtype for name in literals if isinstance(operand_types[name], Static)
                  and int_out_of_range(operand_types[name].value, dtype)})
    return casts


def int_out_of_range(value, dtype):
    """Whether ``value`` is a Python int the integer ``dtype`` cannot hold (``u8 < -2``):
    JAX converts such a literal, wrapping (-2 is 254); NumPy compares by value, and
    raises for ``u8 + -2``."""
    if type(value) is not int or np.dtype(dtype).kind not in "iu":
        return False
    info = np.iinfo(dtype)
    return not info.min <= value <= info.max


def wrapped_int(value, dtype):
    """Python int ``value`` as JAX converts it to ``dtype``: wrapped into its range where
    it does not fit (see int_out_of_range), else unchanged."""
    if int_out_of_range(value, dtype):
        return np.asarray(value).astype(dtype).item()
    return value
