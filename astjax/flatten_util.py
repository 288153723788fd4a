"""``astjax.flatten_util``: ``ravel_pytree``, as ``jax.flatten_util``.

``ravel_pytree(tree)`` gives the leaves raveled and concatenated into one 1-D array (their
promoted dtype; float32 and empty for no leaves) and ``unravel``, which rebuilds a tree of
that structure from such an array. ``unravel`` is a Python function written for this
tree's structure (source text, registered with ``linecache``, so compiled code reads it as
it reads yours): it slices, reshapes and, where the leaves' dtypes differ, casts back, so it
works eagerly and under ``jit``, ``grad`` and ``vmap``. As in JAX, with one leaf dtype it
accepts any dtype; with several it raises TypeError for an array not of the promoted one.
"""
import hashlib
import linecache

import numpy as np

import astjax.numpy as jnp

from ._src import tree_util
from ._src.ir.trees import TreeBuilder

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree):
    leaves, _ = tree_util.tree_flatten(pytree)
    if not leaves:
        flat = jnp.zeros((0,), jnp.float32)
    else:
        from_dtypes = [jnp.result_type(leaf) for leaf in leaves]
        to_dtype = jnp.result_type(*from_dtypes)
        flat = jnp.concatenate([jnp.ravel(jnp.asarray(leaf).astype(to_dtype))
                                for leaf in leaves])
    return flat, _unravel_function(pytree, leaves)


def _unravel_function(pytree, leaves):
    """The source of ``unravel(flat)`` for this tree, compiled into a function."""
    namespace = {"jnp": jnp}
    shapes = [np.shape(leaf) for leaf in leaves]
    dtypes = [jnp.result_type(leaf) for leaf in leaves]
    to_dtype = jnp.result_type(*dtypes) if leaves else None
    mixed = len(set(dtypes)) > 1
    lines = ["def unravel(flat):"]
    if mixed:
        namespace["_to_dtype"] = to_dtype
        lines += ["    if flat.dtype != _to_dtype:",
                  "        raise TypeError(f'unravel function given array of dtype "
                  "{flat.dtype}, but expected dtype {_to_dtype}')"]
    start = 0
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        stop = start + int(np.prod(shape, dtype=np.int64))
        value = f"flat[{start}:{stop}].reshape({shape!r})"
        if mixed:
            namespace[f"_dtype{i}"] = dtype
            value += f".astype(_dtype{i})"
        lines.append(f"    leaf{i} = {value}")
        start = stop
    counter = iter(range(len(leaves)))
    lines.append(f"    return {_build_source(pytree, counter, namespace)}")
    source = "\n".join(lines) + "\n"
    digest = hashlib.sha1(source.encode() + repr(sorted(map(str, namespace))).encode())
    filename = f"<astjax.flatten_util unravel {digest.hexdigest()[:16]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace["unravel"]


def _build_source(node, counter, namespace):
    """Source building ``node`` from the leaf names, in flatten order."""
    level = tree_util.flatten_one_level(node)
    if level is None:
        return f"leaf{next(counter)}"
    children, _, aux = level
    parts = [_build_source(child, counter, namespace) for child in children]
    name = f"_node{len(namespace)}"
    namespace[name] = TreeBuilder(type(node), aux)
    return f"{name}({', '.join(parts)})"
