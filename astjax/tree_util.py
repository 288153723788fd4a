from ._src.tree_util import *  # noqa
