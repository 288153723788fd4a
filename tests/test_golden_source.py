"""Golden snapshots of generated source: a change to what users read is a reviewed change.

Regenerate after an intended change with ASTJAX_UPDATE_GOLDEN=1 and read the diff.
"""
import os
import pathlib

import numpy as np
import pytest

import astjax

from . import programs as P

GOLDEN = pathlib.Path(__file__).parent / "golden"
F32 = np.ones(4, np.float32)
I32 = np.arange(4, dtype=np.int32)

CASES = {
    "arith": (P.arith, (F32, F32)),
    "break_continue": (P.break_continue, (F32, 5)),
    "early_return": (P.early_return, (F32, 1)),
    "promotion": (P.promotion, (I32, F32)),
    "calls_helper": (P.calls_helper, (F32,)),
    "enumerate_zip": (P.enumerate_zip, (F32, F32)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden(name):
    fn, args = CASES[name]
    source = astjax.make_source(fn)(*args)
    path = GOLDEN / f"{name}.py"
    if os.environ.get("ASTJAX_UPDATE_GOLDEN"):
        path.write_text(source)
    assert source == path.read_text()
