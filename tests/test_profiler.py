"""astjax.profiler: memory profiles (pprof protobuf, parsed back here) and traces."""
import gc
import glob
import gzip
import json
import os
import sys
import threading
import time

import numpy as np
import pytest

import astjax
import astjax.numpy as jnp
from astjax import profiler
from astjax._src.ir.types import ArrayType
from astjax._src.runtime import dispatch, profiling

HERE = os.path.abspath(__file__)
F32 = ArrayType(np.dtype(np.float32), (False,), False)


# --- a small protobuf decoder (wire format) and the pprof schema -----------------------------

def _varint(data, i):
    shift = result = 0
    while True:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, i
        shift += 7


def decode(data):
    """{field number: [values]}; length-delimited values stay bytes."""
    fields, i = {}, 0
    while i < len(data):
        key, i = _varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            n, i = _varint(data, i)
            value, i = data[i:i + n], i + n
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"wire type {wire}")
        fields.setdefault(field, []).append(value)
    return fields


def packed(values):
    """A repeated integer field, packed (bytes) or not (ints)."""
    out = []
    for v in values:
        if isinstance(v, bytes):
            i = 0
            while i < len(v):
                n, i = _varint(v, i)
                out.append(n)
        else:
            out.append(v)
    return out


def parse_profile(path):
    with open(path, "rb") as fh:
        raw = fh.read()
    assert raw[:2] == b"\x1f\x8b"  # gzipped
    p = decode(gzip.decompress(raw))
    strings = [s.decode() for s in p[6]]
    assert strings[0] == ""
    functions = {}
    for f in p.get(5, []):
        f = decode(f)
        functions[f[1][0]] = (strings[f[2][0]], strings[f[4][0]])
    locations = {}
    for loc in p.get(4, []):
        loc = decode(loc)
        lines = [decode(line) for line in loc[4]]
        locations[loc[1][0]] = [(functions[ln[1][0]], ln.get(2, [0])[0]) for ln in lines]
    sample_types = [(strings[decode(t)[1][0]], strings[decode(t)[2][0]]) for t in p[1]]
    samples = []
    for s in p.get(2, []):
        s = decode(s)
        labels = {}
        for lab in s.get(3, []):
            lab = decode(lab)
            labels[strings[lab[1][0]]] = strings[lab[2][0]]
        stack = [locations[i] for i in packed(s[1])]
        samples.append({"stack": stack, "values": packed(s[2]), "labels": labels})
    default = strings[p[14][0]] if 14 in p else None
    return sample_types, samples, default


def samples_at(samples, filename, line):
    out = []
    for s in samples:
        (func, file), ln = s["stack"][0][0]
        if file == filename and ln == line:
            out.append(s)
    return out


# --- memory profiles --------------------------------------------------------------------------

def test_memory_profile_groups_live_arrays_by_site(tmp_path):
    gc.collect()
    line = sys._getframe().f_lineno + 1
    big = [jnp.ones(50_000) for _ in range(3)]  # 3 x 200 kB on one line
    other = jnp.zeros((100, 10), jnp.int32)  # noqa: F841
    other_line = line + 1
    freed = jnp.ones(70_000)
    del freed
    path = str(tmp_path / "memory.prof")
    profiler.save_device_memory_profile(path)
    sample_types, samples, default = parse_profile(path)
    assert sample_types == [("allocations", "count"), ("space", "bytes")]
    assert default == "space"
    (s,) = samples_at(samples, HERE, line)
    assert s["values"] == [3, 3 * 200_000]
    assert s["stack"][0][0][0][0].startswith("test_memory_profile_groups_live_arrays_by_site")
    assert s["labels"]["device"] == str(astjax.devices()[0])
    (o,) = samples_at(samples, HERE, other_line)
    assert o["values"] == [1, 4000]
    assert not any(s["values"][1] == 280_000 for s in samples)  # freed arrays are gone
    assert len(big) == 3


def test_memory_profile_names_the_transform_and_counts_shared_buffers_once(tmp_path):
    x = np.ones(10_000, np.float32)  # 40 kB: above the small-result threshold
    line = sys._getframe().f_lineno + 1
    y = dispatch.execute(lambda v: v * 2, [x], F32, name="jit(double)")
    views = [y[:5000], y.reshape(100, 100)]  # noqa: F841  (eager reshape shares y's buffer)
    small = dispatch.execute(lambda v: v[:2] + 0, [x], F32, name="jit(head)")  # noqa: F841
    path = str(tmp_path / "m.prof")
    profiler.save_device_memory_profile(path)
    _, samples, _ = parse_profile(path)
    (s,) = samples_at(samples, HERE, line)
    assert s["labels"]["transform"] == "jit(double)"
    assert s["stack"][1][0][0] == ("jit(double)", "<astjax transform>")
    assert s["values"] == [1, 40_000]
    head = [s for s in samples if s["labels"].get("transform") == "jit(head)"]
    assert len(head) == 1 and head[0]["values"] == [1, 8]
    assert head[0]["stack"][0][0][0][1] == "<unknown>"  # small results: no line recorded


def test_memory_profile_waits_for_pending_results(tmp_path):
    astjax.config.update("astjax_async_min_bytes", 0)
    try:
        def slow(v):
            time.sleep(0.1)
            return v + 1
        line = sys._getframe().f_lineno + 1
        y = dispatch.execute(slow, [np.ones(1000, np.float32)], F32, name="jit(slow)")
        assert not y.is_ready()
        data = profiler.device_memory_profile()
    finally:
        astjax.config.update("astjax_async_min_bytes", 1 << 22)
    path = tmp_path / "p.prof"
    path.write_bytes(data)
    _, samples, _ = parse_profile(str(path))
    (s,) = samples_at(samples, HERE, line)
    assert s["values"] == [1, 4000] and s["labels"]["transform"] == "jit(slow)"


def test_transform_scope_and_site_switch():
    with profiling.transform_scope("vmap(g)"):
        a = jnp.ones(3)
    assert a._site[2] == "vmap(g)" and profiling.site_location(a._site)[0] == HERE
    astjax.config.update("astjax_record_allocation_sites", False)
    try:
        assert jnp.ones(3)._site is None
    finally:
        astjax.config.update("astjax_record_allocation_sites", True)


def test_live_arrays():
    from astjax._src.runtime.api_runtime import live_arrays
    x = jnp.arange(7.0)
    y = jnp.arange(5.0)
    y.delete()
    live = live_arrays()
    assert any(a is x for a in live) and not any(a is y for a in live)


# --- traces ----------------------------------------------------------------------------------

def load_trace(log_dir):
    (path,) = glob.glob(os.path.join(str(log_dir), "plugins", "profile", "*", "*.trace.json.gz"))
    with gzip.open(path, "rt") as fh:
        return path, json.load(fh)


def test_trace_records_annotations_ops_and_calls(tmp_path):
    try:
        with profiler.trace(tmp_path):
            with profiler.TraceAnnotation("my step", step=3):
                x = jnp.ones(4) * 2  # small: runs now, an "eager" event
                astjax.config.update("astjax_async_min_bytes", 0)
                y = dispatch.execute(lambda v: v + 1, [np.ones(4, np.float32)], F32,
                                     name="jit(inc)")
                y.block_until_ready()
            profiling.record_instant("cache hit jit(inc)", "cache")
            with profiling.trace_event("compile jit(inc)", "compile", backend="python"):
                time.sleep(0.001)
    finally:
        astjax.config.update("astjax_async_min_bytes", 1 << 22)
    path, trace = load_trace(tmp_path)
    assert os.path.basename(path).endswith(".trace.json.gz")
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    for e in complete:
        assert {"name", "cat", "ts", "dur", "pid", "tid"} <= set(e)
        assert e["dur"] >= 0
    names = {e["name"]: e for e in complete}
    step = names["my step"]
    assert step["cat"] == "user" and step["args"] == {"step": 3}
    assert "multiply" in names and names["multiply"]["cat"] == "eager"
    execute = names["execute jit(inc)"]
    dispatched = names["dispatch jit(inc)"]
    assert execute["tid"] != step["tid"] and dispatched["tid"] == step["tid"]  # worker thread
    assert step["ts"] <= dispatched["ts"] <= step["ts"] + step["dur"]
    assert names["compile jit(inc)"]["dur"] >= 1000 * 0.9  # microseconds
    assert names["compile jit(inc)"]["args"] == {"backend": "python"}
    assert "cache hit jit(inc)" in names
    threads = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert "astjax CPU_0 worker" in threads and threading.current_thread().name in threads
    assert float(x[0]) == 2.0


def test_start_and_stop_trace(tmp_path):
    profiler.start_trace(str(tmp_path))
    with pytest.raises(RuntimeError, match="already"):
        profiler.start_trace(str(tmp_path))

    @profiler.annotate_function
    def work():
        return jnp.sin(jnp.ones(2))

    work()
    path = profiler.stop_trace()
    with pytest.raises(RuntimeError, match="no trace"):
        profiler.stop_trace()
    with gzip.open(path, "rt") as fh:
        names = [e["name"] for e in json.load(fh)["traceEvents"]]
    assert any(n.endswith("work") for n in names) and "sin" in names
    profiling.record_event("ignored", "x", 0, 1)  # not tracing: nothing happens
    with profiler.TraceAnnotation("also ignored"):
        pass


def test_trace_records_transfers_and_errors(tmp_path):
    from astjax._src.runtime import devices as devices_mod
    old = devices_mod._set_num_cpu_devices(2)
    try:
        with profiler.trace(tmp_path):
            astjax.device_put(jnp.ones(8), astjax.devices()[1])
            with pytest.raises(ValueError):
                with profiling.trace_event("failing", "compile"):
                    raise ValueError("no")
    finally:
        devices_mod._CPU = old
    _, trace = load_trace(tmp_path)
    names = {e["name"]: e for e in trace["traceEvents"] if e["ph"] == "X"}
    assert names["transfer"]["args"] == {"from": "CPU_0", "to": "CPU_1", "bytes": 32}
    assert names["failing"]["args"]["error"] == "ValueError: no"
