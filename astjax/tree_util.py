from ._src.tree_util import *  # noqa
# these also compile inside jit (the tree's structure is in its type)
from ._src.lax.trees import tree_leaves, tree_map, tree_reduce  # noqa: F401,F811
