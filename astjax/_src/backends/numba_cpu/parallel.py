"""Elementwise loop nests on every core (``jit(..., parallel=True)``).

A ``prange`` around a fused loop body of a hundred statements sends Numba's
parfor passes quadratic (copy propagation deep-copies its tables per
statement): the threefry hash compiled in 31 s instead of 4 s. So the body
becomes a kernel of its own, an ordinary ``njit`` function over a range of the
outer index, and only a call to it sits inside the ``prange``::

    if n0 * n1 < 65536:               # small: no thread start-up
        _kernel3(0, n0, x, out, n1)
    else:
        chunks3 = min(n0, 64)
        for c3 in _nb.prange(chunks3):
            _kernel3(c3 * n0 // chunks3, (c3 + 1) * n0 // chunks3, x, out, n1)

Each chunk writes its own rows of the outputs, and the kernel's loop vectorizes
as the sequential one does. For that its outer index is unsigned where it subscripts
an array: Numba wraps a signed index that may be negative (``x[i]`` with ``i`` from
``range(start, stop)`` is ``x[i + n]`` when ``i < 0``), and that branch per element kept
LLVM from vectorizing the kernels (exp over 1M floats: 1.33 ms against 0.55 ms).
Arithmetic on the index (``x[i * s]``) keeps a signed copy.
"""
import ast
import builtins

_INDENT = "    "
MIN_PARALLEL_ELEMENTS = 1 << 16  # below this a loop runs on the calling thread
# pieces per loop: prange hands each thread a run of them. A fixed count, as Numba
# cannot cache a function that asks for the thread count.
_CHUNKS = 64
_MODULE_NAMES = {"np", "math", "_nb", "_ml", "_rt", "_Broadcast", "_BroadcastDonated"} | \
    set(dir(builtins))


def loop_nest(emitter, sizes, idx, body):
    """Lines (indented relative to the caller) looping ``idx`` over ``sizes`` around
    ``body``, whose items are element-level lines: text, or (text, statement) to map back
    to the user's line. Outlined into a parallel kernel when the emitter is parallel."""
    if not emitter.parallel or sizes[0] == "1":
        return _nest(emitter, sizes, idx, body, 0)
    kernel = emitter.names.fresh("_kernel")
    start, stop = emitter.names.fresh("start"), emitter.names.fresh("stop")
    unsigned = emitter.names.fresh("u")
    body, signed_left = _unsigned_subscripts(body, idx[0], unsigned)
    if signed_left:
        body = [f"{idx[0]} = np.intp({unsigned})"] + body
    inner = _nest(emitter, [f"np.uintp({start}), np.uintp({stop})"] + sizes[1:],
                  [unsigned] + list(idx[1:]), body, 1)
    params = _free_names(inner, set(idx) | {start, stop})
    emitter.kernels.append(
        [emitter.kernel_decorator(), f"def {kernel}({', '.join([start, stop] + params)}):"]
        + inner)
    args = ", ".join(params)
    chunks, c = emitter.names.fresh("chunks"), emitter.names.fresh("c")
    total = " * ".join(sizes)
    return [f"if {total} < {MIN_PARALLEL_ELEMENTS}:",
            _INDENT + f"{kernel}(np.intp(0), {sizes[0]}, {args})",
            "else:",
            _INDENT + f"{chunks} = min({sizes[0]}, {_CHUNKS})",
            _INDENT + f"for {c} in _nb.prange({chunks}):",
            _INDENT * 2 + f"{kernel}({c} * {sizes[0]} // {chunks}, "
                          f"({c} + 1) * {sizes[0]} // {chunks}, {args})"]


def _nest(emitter, sizes, idx, body, depth):
    lines = [_INDENT * (depth + d) + f"for {idx[d]} in range({sizes[d]}):"
             for d in range(len(sizes))]
    inner = depth + len(sizes)
    for item in body:
        if isinstance(item, tuple):
            lines.append(emitter.line(item[0], inner, item[1]))
        else:
            lines.append(_INDENT * inner + item)
    return lines


def _unsigned_subscripts(body, index, unsigned):
    """``body`` with ``index`` replaced by ``unsigned`` where it is a subscript (or one
    of a subscript's indices), and whether ``index`` is still read elsewhere."""
    out, left = [], False
    for item in body:
        text = item[0] if isinstance(item, tuple) else item
        try:
            tree = ast.parse(text.strip())
        except SyntaxError:
            tree = None
        if tree is not None:
            for node in ast.walk(tree):
                if isinstance(node, ast.Subscript):
                    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else None
                    if parts is None and _is_name(node.slice, index):
                        node.slice = ast.Name(id=unsigned, ctx=ast.Load())
                    for k, part in enumerate(parts or ()):
                        if _is_name(part, index):
                            parts[k] = ast.Name(id=unsigned, ctx=ast.Load())
            text = ast.unparse(tree)
            left = left or any(_is_name(n, index) for n in ast.walk(tree))
        else:
            left = True
        out.append((text, item[1]) if isinstance(item, tuple) else text)
    return out, left


def _is_name(node, name):
    return isinstance(node, ast.Name) and node.id == name


def _free_names(lines, bound):
    """Variables the kernel's lines read but do not define: its parameters, in order."""
    texts = [item[0] if isinstance(item, tuple) else item for item in lines]
    tree = ast.parse("def _():\n" + "\n".join(texts))
    stored = set(bound)
    read = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                stored.add(node.id)
            elif node.id not in read:
                read.append(node.id)
    return [name for name in read if name not in stored and name not in _MODULE_NAMES]
