"""astjax: JAX's programming model as a source-to-source compiler on Numba."""
from ._src.runtime.blas import set_up_threads as _set_up_threads
_set_up_threads()
from ._src.runtime.vectors import prefer_512_bit_vectors as _prefer_512_bit_vectors
_prefer_512_bit_vectors()
from ._src.config import config, debug_infs, debug_nans, disable_jit, log_compiles
from ._src.runtime.memory import keep_freed_memory as _keep_freed_memory
from ._src.runtime.array import Array
from ._src.runtime.api_runtime import (block_until_ready, default_backend, device_count,
                                       device_get, device_put, devices, effects_barrier,
                                       live_arrays, local_device_count, local_devices,
                                       process_count, process_index)
from ._src.api import jit, make_source
from ._src.ad.api import grad, jvp, linearize, value_and_grad, vjp
from ._src.ad.checkpoint import checkpoint, remat
from ._src.ad.jacobian import hessian, jacfwd, jacrev
from ._src.ad.custom import custom_jvp, custom_vjp
from ._src.batching.api import vmap
from ._src.batching.pmap import pmap
from ._src.shapes_api import ShapeDtypeStruct, eval_shape, typeof
from ._src.callbacks import pure_callback
from ._src.misc_api import (clear_caches, closure_convert, custom_gradient, ensure_compile_time_eval,
                            linear_transpose, named_call, named_scope)
from . import dtypes, lax, numpy, nn, test_util, tree, tree_util  # noqa: F401
from . import ad_checkpoint, checkpoint_policies  # noqa: F401
from . import debug, ops, profiler, random  # noqa: F401

jacobian = jacrev  # JAX's alias (its "Thinking in JAX" calls jax.jacobian)

__version__ = "0.1.0"
_keep_freed_memory()


def __getattr__(name):
    """``astjax.scipy`` after ``import astjax``, as ``jax.scipy`` (imported on first use:
    it adds 40 ms that most programs do not need)."""
    if name == "scipy":
        import importlib
        return importlib.import_module("astjax.scipy")
    raise AttributeError(f"module 'astjax' has no attribute {name!r}")
