"""Public transformations. One compiled version per abstract signature.

``jit`` compiles with the configured backend (Numba by default; the python
backend, generated NumPy source, where Numba has no lowering); transforms built
on ``Jitted`` and called outside jit run the python backend.
"""
import functools
import inspect
import os
import sys
import threading
import time
import types
import weakref

import numpy as np

from .backends.loader import load_module
from .backends.python import PythonEmitter
from .config import config
from .errors import AstjaxError
from .frontend.pipeline import dump
from .ir.specialize import Program
from .ir.types import Static, type_of_value
from .runtime import dispatch, profiling
from .runtime.array import to_numpy_input
from .runtime.devices import default_device


_FASTCALL = [None]  # backends/numba_cpu/fastcall.py, imported on the first jitted call


def _load_fastcall():
    from .backends.numba_cpu import fastcall
    _FASTCALL[0] = fastcall
    return fastcall


_GENERATION = [0]  # bumped by every config change: fast-path entries then miss
config.on_change(lambda name, value: _GENERATION.__setitem__(0, _GENERATION[0] + 1))


class Compiled:
    """A generated module and its entry function for one abstract signature.

    ``backend="numba"`` emits fused loops compiled by Numba; where that backend has no
    lowering (or Numba cannot compile the result) the python backend runs instead, and
    ``log_compiles`` says why.
    """

    def __init__(self, target, arg_types, backend="python", parallel=None):
        self.target = target
        self.arg_types = arg_types
        self.backend = backend
        self.fallback_reason = None
        self.forced_parallel = parallel  # None: the target's or config's choice
        if backend == "numba":
            from .backends.numba_cpu.emitter import Unsupported
            try:
                self._build("numba")
                return
            except Unsupported as e:
                self._fall_back(str(e))
                return
        self._build("python")

    def _build(self, backend):
        start = time.perf_counter()
        from .backends import source_cache
        cache, why_not = source_cache.open_for(self.target, self.arg_types, backend) \
            if self.forced_parallel is None else (None, "parallel=False forced")
        hit = cache.lookup() if cache is not None else None
        if hit is not None:
            try:
                self._load(backend, hit.source, hit.spec_name, hit.namespace, hit.line_map)
            except Exception as e:  # an entry that does not load: generate it again
                hit, cache.miss_reason = None, f"cannot load the entry: {e}"
        if hit is not None:
            self.source, self.name, self.out_type = hit.source, hit.name, hit.out_type
            dump("emit", hit.name, self.source)
            profiling.record_instant(f"source cache hit {self.name}", "cache")
            if config.log_compiles:
                print(f"astjax: source cache hit for {backend} code of {self.name}"
                      f"({', '.join(map(str, self.arg_types))}) in "
                      f"{time.perf_counter() - start:.3f} s", file=sys.stderr)
            return
        program, fn, spec = self._specialize(backend)
        if backend == "numba":
            from .backends.numba_cpu.emitter import NumbaEmitter
            params = [a.id for a in spec.fdef.args.args]
            donated = [params[i] for i in getattr(self.target, "donate_argnums", ())
                       if i < len(params)]
            emitter = NumbaEmitter(program, spec, donated, self._parallel())
        else:
            emitter = PythonEmitter(program)
        self.source = emitter.module_source()
        dump("emit", fn.__qualname__, self.source)
        namespace = {name: value for name, value, _ in program.captured.values()}
        namespace.update({name: value for name, value in program.statics.values()})
        self._load(backend, self.source, spec.name, namespace, emitter.line_map)
        self.name = fn.__qualname__
        self.out_type = spec.return_type
        if cache is not None:
            try:
                cache.store(program, self.source, spec.name, self.name, self.out_type,
                            emitter.line_map)
            except source_cache.Uncacheable as e:
                source_cache.STATS["uncacheable"] += 1
                why_not = str(e)
            except Exception as e:  # a full disk, say: the cache is only an optimization
                why_not = f"cannot write the entry: {type(e).__name__}: {e}"
        if config.log_compiles:
            print(f"astjax: generated {backend} code for {self.name}"
                  f"({', '.join(map(str, self.arg_types))}) in "
                  f"{time.perf_counter() - start:.3f} s", file=sys.stderr)
            if why_not is not None and source_cache.enabled():
                print(f"astjax: source cache: not caching {self.name}: {why_not}",
                      file=sys.stderr)
            elif cache is not None and cache.miss_reason is not None:
                print(f"astjax: source cache miss for {self.name}: {cache.miss_reason}",
                      file=sys.stderr)

    def _specialize(self, backend):
        """The typed program of the target at these argument types; rebuilt once with
        looping callees as checkpoints where their split derivative is differentiated
        again (ad.reverse.SplitRefused)."""
        from .ad.reverse import SplitRefused
        for split_lists in (True, False):
            program = Program()
            program.backend, program.split_lists = backend, split_lists
            try:
                fn = self.target.function_for(self.arg_types, program)
                return program, fn, program.specialize(fn, self.arg_types)
            except SplitRefused:
                if not split_lists:
                    raise

    def _parallel(self):
        parallel = getattr(self.target, "parallel", None) if self.forced_parallel is None \
            else self.forced_parallel
        self.parallel = config.astjax_parallel if parallel is None else bool(parallel)
        return self.parallel

    def _load(self, backend, source, entry_name, namespace, line_map):
        """Import generated ``source`` with ``namespace`` (captured values, constants)."""
        namespace = dict(namespace)
        namespace["__astjax_line_map__"] = line_map
        if backend == "numba":
            from .backends.numba_cpu import boundary
            self._parallel()
            namespace = boundary.module_namespace(namespace)
            source += boundary.key_comment(namespace)
        module = load_module(source, entry_name, namespace)
        self.entry = getattr(module, entry_name)
        if backend == "numba" and self.parallel:
            self.entry = boundary.one_parallel_call_at_a_time(self.entry)
        self.backend = backend
        self.first_call = backend == "numba"

    def _fall_back(self, reason):
        self.fallback_reason = reason
        if config.log_compiles:
            print(f"astjax: {getattr(self.target, '__name__', self.target)}: the numba "
                  f"backend cannot compile this ({reason}); using the python backend",
                  file=sys.stderr)
        self._build("python")

    def run(self, values, donate_argnums=()):
        """Call the generated entry on the user's values; return Arrays (pending ones when
        the call is queued on its device: see runtime/dispatch.py)."""
        if self.backend == "numba" and self.first_call and config.astjax_tiered_compile:
            twin = self._tier(values)
            if twin is not None:
                return twin.run(values, donate_argnums)
        device = dispatch.placement(values)
        label = f"jit({self.name})"
        if not (self.backend == "numba" and self.first_call) and dispatch.any_pending(values):
            return self._run_behind(values, donate_argnums, device, label)
        if self.backend == "numba":
            from .backends.numba_cpu import boundary
            values = dispatch.donate_arguments(values, donate_argnums)
            inputs = [boundary.to_numba(v, t) for v, t in zip(values, self.arg_types)
                      if not isinstance(t, Static)]
            if self.first_call:
                return self._first_numba_call(values, inputs, device, donate_argnums)
            entry = self._numba_or_python(values, bool(donate_argnums))
            return dispatch.execute(entry, inputs, self.out_type, device=device, name=label,
                                    wrap=_wrap_either,
                                    nan_origin=self._nan_origin(values, donate_argnums))
        origin = self._nan_origin(values, donate_argnums)
        inputs = dispatch.convert_inputs(values, self.arg_types, donate_argnums)
        return dispatch.execute(self._call_python, inputs, self.out_type, device=device,
                                name=label, nan_origin=origin)

    def _run_behind(self, values, donate_argnums, device, label):
        """A call taking results of queued calls before they are ready: queued behind them
        instead of waiting, so Python runs ahead through a chain of calls (a training loop).
        It was specialized on the types those calls promised; if one turns out to have a
        size-1 dim its type did not know (``x[:k]`` with k == 1), the python backend runs
        it for the real types instead."""
        values = dispatch.donate_arguments(values, donate_argnums, later=True)
        donated = bool(donate_argnums)

        def call():
            ready, exact = dispatch.wait_for_arguments(values)
            if not exact:
                types_now = tuple(t if isinstance(t, Static) else type_of_value(v)
                                  for v, t in zip(ready, self.arg_types))
                twins = self.__dict__.setdefault("_retyped", {})  # generated once each
                twin = twins.get(types_now)
                if twin is None:
                    twin = twins[types_now] = Compiled(self.target, types_now, "python")
                inputs = dispatch.convert_inputs(ready, types_now)
                return "python", twin._call_python(*inputs), twin.out_type
            if self.backend == "numba":
                from .backends.numba_cpu.boundary import to_numba
                inputs = [to_numba(v, t) for v, t in zip(ready, self.arg_types)
                          if not isinstance(t, Static)]
                kind, out = self._numba_or_python(ready, donated)(*inputs)
                return kind, out, self.out_type
            inputs = dispatch.convert_inputs(ready, self.arg_types)
            return "python", self._call_python(*inputs), self.out_type
        return dispatch.execute(call, (), self.out_type, device=device, name=label,
                                wrap=_wrap_behind, behind=True,
                                nan_origin=self._nan_origin(values, donate_argnums))

    # --- tiered compilation ----------------------------------------------------------------
    def _tier(self, values):
        """Tiered jit: the python twin that runs calls while Numba compiles on a background
        thread (started by the first call), or None once that compile has ended: this
        call then runs the Numba code, or the python backend if Numba failed."""
        thread = getattr(self, "_background", None)
        if thread is None:
            import numba
            from .backends.numba_cpu import boundary
            signature = tuple(numba.typeof(boundary.to_numba(v, t)) for v, t in
                              zip(values, self.arg_types) if not isinstance(t, Static))
            self._background_error = None
            thread = self._background = threading.Thread(
                target=self._background_compile, args=(signature,),
                name=f"astjax compile {self.name}")
            thread.start()  # (not a daemon: exiting waits, no half-written Numba cache)
            if config.log_compiles:
                print(f"astjax: Numba compiles {self.name} in the background; calls run on "
                      f"the python backend until it is done", file=sys.stderr)
        elif not thread.is_alive():
            if self._background_error is not None:
                from .backends.numba_cpu.boundary import numba_failure
                self._fall_back(numba_failure(self._background_error, self.entry))
            self.first_call = False
            return None
        return self.python_twin()

    def _background_compile(self, signature):
        from .backends.numba_cpu.boundary import dispatcher
        start = time.perf_counter()
        try:
            dispatcher(self.entry).compile(signature)
        except Exception as e:  # reported by the next call (_tier), in the caller's thread
            self._background_error = e
            return
        if config.log_compiles:
            print(f"astjax: Numba compiled {self.name} in the background in "
                  f"{time.perf_counter() - start:.3f} s", file=sys.stderr)

    def _nan_origin(self, values, donate_argnums):
        """For ``debug_nans``: rerun the call on the python backend with NumPy raising at
        the first invalid operation, whose user line the error then names (JAX reruns
        de-optimized too). Not when arguments were donated: their buffers may be gone."""
        if not (config.debug_nans or config.debug_infs) or donate_argnums:
            return None
        infs = "raise" if config.debug_infs else "ignore"

        def origin():
            twin = self if self.backend == "python" else self.python_twin()
            try:
                with np.errstate(invalid="raise" if config.debug_nans else "ignore",
                                 divide=infs, over=infs):
                    twin._call_python(*dispatch.convert_inputs(values, self.arg_types))
            except FloatingPointError as e:
                return str(e) if getattr(e, "_astjax_located", False) else None
            except Exception:
                return None  # the rerun failed otherwise: name the call only
            return None
        return origin

    def _numba_or_python(self, values, donated=False):
        """The Numba entry; where sizes differ at run time (a size-1 dim the types did not
        know), the python backend runs the call with NumPy's broadcasting instead. An error
        raised in Numba code (say np.dot's "incompatible array sizes") reruns there too, so
        it names the user's line (not when a donated buffer may have been written)."""
        from .backends.numba_cpu.runtime import BroadcastAfterDonation, RuntimeBroadcast

        def call(*inputs):
            try:
                return "numba", self.entry(*inputs)
            except RuntimeBroadcast:
                pass
            except BroadcastAfterDonation:
                raise
            except AssertionError as e:  # Numba's parallel analysis assumed equal sizes
                if not (self.backend == "numba" and self.parallel) or donated:
                    raise
                self._recompile_serial(e)
                if self.backend == "numba":
                    return "numba", self.entry(*inputs)
            except (ValueError, IndexError, ArithmeticError):
                if donated:
                    raise
            twin = self.python_twin()
            return "python", twin._call_python(*dispatch.convert_inputs(values, self.arg_types))
        return call

    def _recompile_serial(self, error):
        """Numba's ``parallel=True`` analysis can take two sizes for equal that are not (an
        array that changes shape across a loop's trips: ``for w, b in params``) and raise
        an AssertionError: this version then runs serial Numba code instead."""
        if config.log_compiles:
            print(f"astjax: {self.name}: Numba's parallel analysis failed at run time "
                  f"({str(error).splitlines()[0]}); compiling it without parallel=True",
                  file=sys.stderr)
        serial = Compiled(self.target, self.arg_types, "numba", parallel=False)
        self.entry, self.source, self.parallel = serial.entry, serial.source, False
        self.backend, self.fallback_reason = serial.backend, serial.fallback_reason
        if self.backend == "numba":  # its products still use every core, as asked
            from .backends.numba_cpu import boundary
            self.entry = boundary.one_parallel_call_at_a_time(self.entry)

    def python_twin(self):
        twin = getattr(self, "_twin", None)
        if twin is None:
            twin = self._twin = Compiled(self.target, self.arg_types, "python")
        return twin

    def _call_python(self, *inputs):
        try:
            with np.errstate(over="ignore"):  # integers wrap silently, as in JAX
                return self.entry(*inputs)
        except Exception as e:
            locate_runtime_error(e)
            raise

    def _first_numba_call(self, values, inputs, device, donate_argnums):
        """Numba compiles now, synchronously; a failure there is ours, not the user's."""
        import numba
        (device or default_device()).synchronize()
        start = time.perf_counter()
        with profiling.trace_event(f"numba compile {self.name}", "compile"):
            try:
                kind, out = self._numba_or_python(values, bool(donate_argnums))(*inputs)
            except Exception as e:
                if not (isinstance(e, numba.core.errors.NumbaError) or _raised_by_numba(e)):
                    raise
                from .backends.numba_cpu.boundary import numba_failure
                self._fall_back(numba_failure(e, self.entry))
                return self.run(values)
        self.first_call = False
        if config.log_compiles:
            print(f"astjax: Numba compiled {self.name} in "
                  f"{time.perf_counter() - start:.3f} s", file=sys.stderr)
        if config.debug_nans or config.debug_infs:
            dispatch.check_nans(out, None, f"jit({self.name})",
                                self._nan_origin(values, donate_argnums))
        return _wrap_either((kind, out), self.out_type)


def _raised_by_numba(exc):
    """Whether an exception comes from Numba's compiler (say boxing a value it cannot),
    rather than from running the compiled code."""
    import os
    import traceback
    inside = os.sep + "numba" + os.sep + "core" + os.sep
    return any(inside in frame.filename for frame in traceback.extract_tb(exc.__traceback__))


def _op_function(op):
    """A generated function that calls the jnp function ``op`` (which has no source to
    read), with its parameters and their defaults."""
    from .frontend.parse import parse_function
    from .frontend.synthetic import from_source
    params = []
    last = list(op.signature.parameters)[-1]
    for p in op.signature.parameters.values():
        if p.kind is p.VAR_POSITIONAL and p.name == last:  # jit(jnp.atleast_2d)
            params.append(f"*{p.name}")
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise TypeError(f"astjax cannot transform jnp.{op.name} itself (it takes "
                            f"*{p.name}); wrap the call in a function")
        if p.default is p.empty:
            params.append(p.name)
        elif p.default is None or isinstance(p.default, (bool, int, float, str)):
            params.append(f"{p.name}={p.default!r}")
        else:
            raise TypeError(f"astjax cannot transform jnp.{op.name} itself (the default of "
                            f"{p.name} is {p.default!r}); wrap the call in a function")
    call = ", ".join(f"*{p.name}" if p.kind is p.VAR_POSITIONAL else f"{p.name}={p.name}"
                     for p in op.signature.parameters.values())
    body = f"    return _op({call})\n"
    keywords = op.keyword_function and sorted(op.keyword_function[0] - set(op.signature.parameters))
    if keywords:  # jit(jnp.sum)(x, where=m): the op's keyword function when one is passed
        params += [f"{k}=None" for k in keywords]
        body = (f"    if {' and '.join(f'{k} is None' for k in keywords)}:\n    {body}"
                f"    return _keywords({call}, {', '.join(f'{k}={k}' for k in keywords)})\n")
    return from_source(op.name, f"def {op.name}({', '.join(params)}):\n{body}",
                       {"_op": op, "_keywords": op.keyword_function and op.keyword_function[1]},
                       parse_function(_op_function))


def _wrap_either(result, out_type):
    """Outputs of ``Compiled._numba_or_python``, laid out by the backend that ran."""
    from .backends.numba_cpu import boundary
    kind, out = result
    if kind == "numba":
        return boundary.wrap_output(out, out_type)
    return dispatch.wrap_outputs(out, out_type)


def _wrap_behind(result, out_type):
    """Outputs of ``Compiled._run_behind``'s call, laid out by the code that ran."""
    kind, out, ran_type = result
    return _wrap_either((kind, out), ran_type)


LIVE_TRANSFORMS = weakref.WeakSet()


def _plain_callable_object(fun):
    """An instance of a user's class with a Python ``__call__`` (not a transform, a custom
    function, a generated function or another object the compiler calls through
    ``function_for``)."""
    return isinstance(getattr(type(fun), "__call__", None), types.FunctionType) and \
        not isinstance(fun, type) and not hasattr(fun, "function_for") and \
        not hasattr(fun, "__astjax_wrapped__") and \
        not type(fun).__module__.startswith("astjax._src.")  # (SyntheticFunction, views)


class Transformed:
    """Shared machinery of decorators: argument typing, the specialization cache."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=()):
        if not callable(fun):
            raise TypeError(f"expected a function, got {type(fun).__name__}")
        from .ops.registry import Op, function_for_object, op_for_object
        fun = op_for_object(fun) or function_for_object(fun) or fun  # vmap(np.sum): jnp's
        if isinstance(fun, Op):  # jit(jnp.sin), vmap(jnp.diag), grad(jnp.tanh)
            fun = _op_function(fun)
        if isinstance(fun, functools.partial):  # jit(partial(f, a)): a generated def
            from .frontend.partials import partial_function
            fun = partial_function(fun)
        elif isinstance(fun, types.MethodType):  # jit(obj.f): obj is a constant, as in JAX
            from .frontend.partials import method_function
            fun = method_function(fun)
        elif _plain_callable_object(fun):  # jit(obj) of a class defining __call__: obj.__call__
            from .frontend.partials import method_function
            fun = method_function(fun.__call__)
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.__astjax_wrapped__ = fun
        self.signature = inspect.signature(fun)
        names = list(self.signature.parameters)
        if isinstance(static_argnums, int):
            static_argnums = (static_argnums,)
        if isinstance(static_argnames, str):
            static_argnames = (static_argnames,)
        kinds = [p.kind for p in self.signature.parameters.values()]
        star = kinds.index(inspect.Parameter.VAR_POSITIONAL) \
            if inspect.Parameter.VAR_POSITIONAL in kinds else None
        # static_argnums past a *args parameter's position pick its elements, as in JAX
        self.static_varargs = {i - star for i in static_argnums if star is not None and i >= star}
        self.static = {names[i] for i in static_argnums
                       if i < len(names) and (star is None or i < star)} | set(static_argnames)
        for i in static_argnums:
            if star is None and not -len(names) <= i < len(names) or \
                    star is not None and not 0 <= i:
                raise ValueError(f"static_argnums {i} is out of range for "
                                 f"{fun.__name__}{self.signature}")
        if isinstance(donate_argnums, int):
            donate_argnums = (donate_argnums,)
        self.donate_argnums = tuple(i % len(names) for i in donate_argnums)
        self.cache = {}
        LIVE_TRANSFORMS.add(self)  # (clear_caches empties every one)

    def __get__(self, obj, objtype=None):
        # a transformed function in a class body is a method, as JAX's jit and grad are
        # (``@jit def calc(self, y)``: c.calc(3) passes c as self)
        return self if obj is None else types.MethodType(self, obj)

    def function_for(self, arg_types, program):
        """The function this transform stands for at these argument types (jit: ``fun``)."""
        fun = self.fun
        return fun.function_for(arg_types, program) if hasattr(fun, "function_for") else fun

    def bind(self, args, kwargs):
        try:
            ba = self.signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self.fun.__name__}(): {e}") from None
        given = set(ba.arguments)
        ba.apply_defaults()
        # as in JAX, a default the caller did not pass is a constant of the function
        return ba, set(ba.arguments) - given

    def backend_now(self):
        """Transforms called outside jit run generated NumPy code (no compile wait)."""
        return "python"

    def _each_argument(self, ba):
        """(name, value, static) per argument, those of ``*args`` one by one: the function
        generated takes each (pipeline.VarargView)."""
        for name, value in ba.arguments.items():
            p = self.signature.parameters[name]
            if p.kind is p.VAR_KEYWORD and not value and hasattr(self.fun, "function_for"):
                continue  # jit(jnp.vectorize(f))(x): a transform's **kwargs, none given
            if p.kind is p.VAR_KEYWORD:
                raise TypeError(f"{self.fun.__name__}(): astjax cannot compile **{name}")
            if p.kind is p.VAR_POSITIONAL:
                yield from ((name, v, name in self.static or k in self.static_varargs)
                            for k, v in enumerate(value))
            else:
                yield name, value, name in self.static

    def compiled_for(self, args, kwargs):
        ba, defaulted = self.bind(args, kwargs)
        values, types_ = [], []
        for name, value, static in self._each_argument(ba):
            if name in defaulted:
                types_.append(Static(value))  # keyed by identity if unhashable
            elif static:
                try:
                    hash(value)
                except TypeError:
                    raise ValueError(f"static argument {name!r} of {self.fun.__name__} must be "
                                     f"hashable, got {type(value).__name__}; pass a tuple "
                                     f"instead of a list/array") from None
                types_.append(Static(value))
            else:
                try:
                    types_.append(type_of_value(value))
                except TypeError as e:
                    if not _static_callable(value):
                        raise TypeError(f"{self.fun.__name__}(): argument {name!r}: {e}") \
                            from None
                    # a function passed in (grad(app, 1)(f, x), a custom_jvp's
                    # nondiff_argnums): a constant of the code, as for static_argnums
                    types_.append(Static(value))
            values.append(value)
        key = (tuple(types_), config.snapshot())
        compiled = self.cache.get(key)
        name = getattr(self.fun, "__qualname__", "f")
        if compiled is None:
            with profiling.trace_event(f"compile {name}", "compile"):
                compiled = Compiled(self, tuple(types_), self.backend_now())
            self.cache[key] = compiled
        else:
            profiling.record_instant(f"cache hit {name}", "cache")
        return compiled, values


def _static_callable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return callable(value)


def _convert_input(value):
    from .tree_util import tree_map
    return tree_map(to_numpy_input, value)


class Jitted(Transformed):
    """``jit(f)``; inside other compiled code it is ``f`` itself."""

    def __init__(self, fun, static_argnums=(), static_argnames=(), donate_argnums=(),
                 parallel=None):
        super().__init__(fun, static_argnums, static_argnames, donate_argnums)
        self.parallel = parallel  # None: config.astjax_parallel
        plain = all(p.kind is p.POSITIONAL_OR_KEYWORD for p in self.signature.parameters.values())
        # key -> (config generation, fast_call): calls on plain arguments skip typing
        self.fast = {} if plain and not self.static and not self.donate_argnums else None
        self.n_params = len(self.signature.parameters)
        # the values of parameters a fast call leaves to their defaults, in order
        self.defaults = [p.default for p in self.signature.parameters.values()]
        self.n_required = sum(d is inspect.Parameter.empty for d in self.defaults)

    def backend_now(self):
        # jit itself compiles with the configured backend; transforms built on Jitted (grad,
        # jacrev, ...) called outside jit run generated NumPy code: no compile wait
        return config.astjax_jit_backend if type(self) is Jitted else "python"

    def __call__(self, *args, **kwargs):
        fastcall = _FASTCALL[0] or _load_fastcall()
        key = None
        if not kwargs and self.fast is not None and self.n_required <= len(args) <= self.n_params:
            key = fastcall.key(args)
            if key is not None:
                hit = self.fast.get(key)
                if hit is not None and hit[0] == _GENERATION[0]:
                    if fastcall.is_big(key):  # queued on its device: the full run, untyped
                        return hit[1].run(list(args) + self.defaults[len(args):])
                    if fastcall.allowed():
                        out = hit[1](args)
                        if out is not None:
                            return out
        if config.jax_disable_jit and type(self) is Jitted:
            return self.fun(*args, **kwargs)  # JAX's disable_jit: f in Python, eagerly
        compiled, values = self.compiled_for(args, kwargs)
        out = compiled.run(values, self.donate_argnums)
        if key is not None and compiled.backend == "numba" and not compiled.first_call \
                and fastcall.applies(compiled, len(args)):
            self.fast[key] = (_GENERATION[0], compiled if fastcall.is_big(key)
                              else fastcall.fast_call(compiled, key))
        return out


    def lower(self, *args, **kwargs):
        """JAX's ahead-of-time API: ``jit(f).lower(*args)`` generates the code for these
        argument types now; ``.as_text()`` is that source and ``.compile()`` a function for
        arguments of the same types (Numba compiles at its first call, or loads the disk
        cache)."""
        compiled, _ = self.compiled_for(args, kwargs)
        return Lowered(self, compiled)


class Lowered:
    """``jit(f).lower(*args)``: the code generated for one set of argument types."""

    def __init__(self, jitted, compiled):
        self.jitted, self.compiled = jitted, compiled

    def as_text(self):
        return self.compiled.source

    def compile(self):
        return LoweredCall(self.jitted, self.compiled)


class LoweredCall(Lowered):
    """``jit(f).lower(*args).compile()``: calls of ``f`` with arguments of the lowered
    types; others are a TypeError, as in JAX."""

    def __call__(self, *args, **kwargs):
        compiled, values = self.jitted.compiled_for(args, kwargs)
        if compiled is not self.compiled:
            raise TypeError(f"{self.compiled.name}: argument types "
                            f"({', '.join(map(str, compiled.arg_types))}) differ from the "
                            f"types it was lowered for "
                            f"({', '.join(map(str, self.compiled.arg_types))})")
        return compiled.run(values, self.jitted.donate_argnums)


def locate_runtime_error(exc):
    """Prefix an error raised inside generated code with the user's file:line (in place):
    the innermost line of the user's code, else (an error in astjax's own compiled code
    called from nowhere else) the innermost line."""
    import linecache
    tb, where = exc.__traceback__, None
    while tb is not None:
        line_map = tb.tb_frame.f_globals.get("__astjax_line_map__")
        if line_map is not None and tb.tb_lineno in line_map:
            here = line_map[tb.tb_lineno]
            if where is None or not _in_astjax(here[0]):
                where = here
        tb = tb.tb_next
    if where is None or getattr(exc, "_astjax_located", False):
        return
    filename, lineno = where
    text = linecache.getline(filename, lineno).strip()
    message = str(exc.args[0]) if exc.args else ""
    exc.args = (f"{filename}:{lineno}: {message}\n    {text}",) + tuple(exc.args[1:])
    exc._astjax_located = True


_ASTJAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _in_astjax(filename):
    return os.path.abspath(filename).startswith(_ASTJAX_DIR + os.sep)


def jit(fun=None, *, static_argnums=(), static_argnames=(), donate_argnums=(), parallel=None):
    """Compile ``fun`` per abstract signature (dtype, rank, size-1 dims, static values).

    ``parallel=True`` runs elementwise loop nests on every core (Numba's ``prange``); it
    pays off on large arrays only (each loop then costs a few microseconds to start).
    ``None`` follows ``config.astjax_parallel`` (off by default)."""
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, parallel=parallel)
    cls = _JittedFinished if getattr(fun, "allow_int", False) and hasattr(fun, "finish") \
        else Jitted
    return cls(fun, static_argnums, static_argnames, donate_argnums, parallel)


class _JittedFinished(Jitted):
    """``jit`` of a transform whose results its own ``finish`` completes outside compiled
    code (``grad(allow_int=True)``: an integer input's float0 gradient)."""

    def __call__(self, *args, **kwargs):
        if config.jax_disable_jit:
            return self.fun(*args, **kwargs)
        return self.fun.finish(args, kwargs, super().__call__(*args, **kwargs))


def make_source(fun, static_argnums=(), static_argnames=()):
    """``make_source(f)(*args)``: the generated source of ``f`` for these argument types."""
    target = fun if isinstance(fun, Transformed) else Transformed(fun, static_argnums,
                                                                  static_argnames)

    def source(*args, **kwargs):
        compiled, _ = target.compiled_for(args, kwargs)
        return compiled.source
    return source


__all__ = ["jit", "make_source", "AstjaxError"]
