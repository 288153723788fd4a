"""``vmap``: batching as an AST rewrite (issue 5; not built yet)."""


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None):
    raise NotImplementedError("astjax.vmap is not implemented yet")
