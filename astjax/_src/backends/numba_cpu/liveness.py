"""Which names are live (may be read before being assigned again) after each statement.

A backward pass over the structured typed ANF: loops iterate to a fixed point, and a
``break``/``continue`` keeps every name alive (exact for what the passes here need:
they only lose an optimization there). Reads include the operand nodes op annotations
point at (``simplify.load_nodes``).
"""
import gast

from .simplify import load_nodes


class Reads:
    """The names each statement (or expression) reads, nested statements included,
    computed once per node: passes over blocks at every depth would otherwise walk inner
    blocks once per enclosing one."""

    def __init__(self):
        self.memo = {}

    def __call__(self, node):
        found = self.memo.get(id(node))
        if found is None:
            if isinstance(node, (gast.If, gast.For, gast.While)):
                header = node.iter if isinstance(node, gast.For) else node.test
                found = {n.id for n in load_nodes(header)}
                for s in node.body + node.orelse:
                    found |= self(s)
            else:
                found = {n.id for n in load_nodes(node)}
            self.memo[id(node)] = found
        return found


class Liveness:
    def __init__(self, fdef, reads=None):
        self.reads = reads or Reads()
        self.after = {}      # id(statement) -> names live after it
        self.block_end = {}  # id(block list) -> names live at its end
        self.everything = {n.id for n in gast.walk(fdef) if isinstance(n, gast.Name)}
        self.block(fdef.body, set())

    def block(self, stmts, out):
        self.block_end[id(stmts)] = out
        live = out
        for s in reversed(stmts):
            self.after[id(s)] = live
            live = self.statement(s, live)
        return live

    def statement(self, s, out):
        if isinstance(s, gast.Assign):
            target = s.targets[0]
            kept = out - {target.id} if isinstance(target, gast.Name) else out
            return kept | self.reads(s)
        if isinstance(s, gast.Return):
            return set(self.reads(s))
        if isinstance(s, gast.If):
            return self.block(s.body, out) | self.block(s.orelse, out) | self.reads(s.test)
        if isinstance(s, (gast.For, gast.While)):
            header = s.iter if isinstance(s, gast.For) else s.test
            head = set(out)  # live where each trip starts (or the loop ends)
            while True:
                body = self.block(s.body, head)
                if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
                    body = body - {s.target.id}
                new = head | body | (set() if isinstance(s, gast.For) else self.reads(header))
                if new == head:
                    break
                head = new
            return head | self.reads(header)
        if isinstance(s, (gast.Break, gast.Continue)):
            return set(self.everything)
        return out | self.reads(s)


def rename_block_locals(fdef):
    """A name assigned in several blocks (a peeled loop's two copies of its body), where
    an assignment is read only by the statements after it in its own block, gets a name
    per such assignment: copies of it then propagate as those of names assigned once do.
    Inner blocks go first, which frees the assignments around them."""
    from .fusion import Names
    from .simplify import _stores, statement_lists
    names = None
    while True:
        stores = _stores(fdef)
        several = {name for name, k in stores.items() if k > 1}
        if not several:
            return
        reads = Reads()
        live = Liveness(fdef, reads)
        renamed = False
        for block in statement_lists(fdef):
            end = live.block_end.get(id(block))
            if end is None:
                continue  # not reached from the function body (never the case)
            first_load, last_store = {}, {}
            for k, t in enumerate(block):
                for name in reads(t):
                    first_load.setdefault(name, k)
                for m in gast.walk(t):
                    if isinstance(m, gast.Name) and not isinstance(m.ctx, gast.Load):
                        last_store[m.id] = k
            for p, s in enumerate(block):
                if not (isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name)):
                    continue
                name = s.targets[0].id
                if name not in several or name in end or first_load.get(name, p + 1) <= p \
                        or last_store.get(name) != p:
                    continue  # read before it (or by itself), assigned again, or live after
                names = names or Names(fdef)
                fresh = names.fresh(f"{name}_")
                s.targets[0].id = fresh
                for t in block[p + 1:]:
                    for m in load_nodes(t):
                        if m.id == name:
                            m.id = fresh
                renamed = True
        if not renamed:
            return
