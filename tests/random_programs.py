"""Random straight-line elementwise programs for fuzzing the Numba backend's fusion.

``program(seed)`` returns the source of ``prog_<seed>(a, b, c, s)``: a, b of shape (n,),
c of shape (m, n), s a scalar. Values are read several times, redefined (sometimes with
another rank), broadcast, reduced along an axis and carried through short loops, which
is what decides how fused loops group, store and recompute values.
"""
import numpy as np

_BINARY = ["+", "-", "*"]
_UNARY = ["jnp.tanh", "jnp.sin", "jnp.exp", "-", "jnp.abs"]


def program(seed, n_stmts=16):
    rng = np.random.default_rng(seed)
    live = ["a", "b"]
    lines = []

    def pick():
        return live[rng.integers(0, len(live))]

    for i in range(n_stmts):
        kind = rng.integers(0, 8)
        target = pick() if rng.random() < 0.3 else f"v{i}"
        x, y = pick(), pick()
        if kind == 7:  # a loop carrying one value
            lines += [f"    {target} = {x} * 1.0", "    for _ in range(2):",
                      f"        {target} = {target} * 0.9 + {target} * {target} * 0.1"]
        else:
            unary = _UNARY[rng.integers(0, len(_UNARY))]
            expr = [f"{x} {_BINARY[rng.integers(0, 3)]} {y}",
                    f"-{x}" if unary == "-" else f"{unary}({x} * 0.1)",
                    f"jnp.where({x} > {y}, {x}, {y} * s)",
                    f"{x} * c[0] + 0.5",
                    f"jnp.maximum({x}, 0.25) - {y} * 0.5",
                    f"c * {x}",
                    f"jnp.sum({x} * {y}, axis=0) * 0.1 + a"][kind]
            lines.append(f"    {target} = {expr}")
        if target not in live:
            live.append(target)
    outs = live[-3:]
    return (f"def prog_{seed}(a, b, c, s):\n" + "\n".join(lines) + "\n"
            f"    return ({', '.join(outs)},), jnp.sum({outs[-1]})\n")
