"""``jax.tree``: the short names of ``tree_util``'s functions (``tree.map`` is
``tree_util.tree_map``, so it compiles inside jit as that does)."""
from .tree_util import (  # noqa: F401
    tree_all as all, tree_flatten as flatten, tree_flatten_with_path as flatten_with_path,
    tree_leaves as leaves, tree_leaves_with_path as leaves_with_path, tree_map as map,
    tree_map_with_path as map_with_path, tree_reduce as reduce, tree_structure as structure,
    tree_transpose as transpose, tree_unflatten as unflatten)
