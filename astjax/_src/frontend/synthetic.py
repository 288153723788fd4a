"""Functions the compiler writes itself (derivatives, wrappers), fed through the same pipeline.

A ``SyntheticFunction`` carries a gast ``FunctionDef`` and the namespace its
names resolve in. Its nodes keep the user's locations, so errors and the
comments in generated source point at the user's lines.
"""
import inspect

import gast


class SyntheticFunction:
    def __init__(self, name, fdef, namespace, origin):
        """``origin``: the ParsedFunction whose file and lines locations refer to."""
        self.__name__ = self.__qualname__ = name
        self.__globals__ = namespace
        self.origin = origin
        self.__closure__ = None
        if fdef is not None:
            self.set_body(fdef)

    def set_body(self, fdef):
        """Give the function its definition (a recursive derivative is named before it is
        written)."""
        self.fdef = fdef
        if not hasattr(fdef, "lineno"):  # the generated def sits where the user's does
            fdef.lineno, fdef.col_offset = self.origin.node.lineno, self.origin.node.col_offset
        args, defaults = fdef.args.args, fdef.args.defaults  # (constant defaults only)
        first_default = len(args) - len(defaults)
        self.__signature__ = inspect.Signature(
            [inspect.Parameter(a.id, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                               default=_constant(defaults[k - first_default])
                               if k >= first_default else inspect.Parameter.empty)
             for k, a in enumerate(args)] +
            [inspect.Parameter(v.id, inspect.Parameter.VAR_POSITIONAL)
             for v in [fdef.args.vararg] if v is not None])  # (a lifted def's *args)

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.__name__} is generated code; it runs inside compiled functions")

    def __repr__(self):
        return f"<synthetic function {self.__name__}>"


def _constant(node):
    """The value of a constant default (``-1`` is a negation of 1)."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        return -_constant(node.operand)
    return node.value


def function_def(name, params, body):
    args = gast.arguments(args=[gast.Name(id=p, ctx=gast.Param(), annotation=None,
                                          type_comment=None) for p in params],
                          posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[],
                          kwarg=None, defaults=[])
    return gast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None, type_params=[])


def from_source(name, source, namespace, origin, into=None):
    """A SyntheticFunction from Python source text (a template filled in by the caller);
    ``into``: an existing (named, not yet written) SyntheticFunction to fill instead.

    Its nodes take the location of ``origin``'s def, so what it does is reported at
    the user's function."""
    import textwrap
    fdef = gast.parse(textwrap.dedent(source)).body[0]
    for node in gast.walk(fdef):
        if isinstance(node, (gast.stmt, gast.expr)):
            node.lineno, node.col_offset = origin.node.lineno, 0
    if into is None:
        return SyntheticFunction(name, fdef, namespace, origin)
    into.__globals__.update(namespace)
    into.set_body(fdef)
    return into
