#!/usr/bin/env python3
"""Session-6 experiment, benchmark-only: this branch's warp kernels at other launch shapes: a row
over `group` lanes with `packs` packs a lane (group * packs = the row's packs), so that each lane's
per-row work (reductions, divide, square root, fallback test) is spread over more values. Each
shape on both grids, % of cuMemcpyDtoD, median of 30, ROUNDS alternating rounds; outputs compared
with the planned shape's (reduction order differs: counts of differing elements, max ulp).
Usage: shape_bench.py CUBIN_DIR TYPES WIDTHS ROUNDS"""
import glob, math, os, sys
import numpy as np
import cupy as cp

d, types, widths, rounds = sys.argv[1], sys.argv[2].split(","), [int(w) for w in sys.argv[3].split(",")], int(sys.argv[4])
mods = [cp.RawModule(path=p) for p in sorted(glob.glob(os.path.join(d, "*.cubin")))]
def find(name):
    for m in mods:
        try:
            f = m.get_function(name)
        except Exception:
            continue
        return f, int(cp.ndarray((1,), cp.int32, m.get_global(name + "_rows")).get()[0])
    raise KeyError(name)
sms = cp.cuda.Device(0).attributes["MultiProcessorCount"]
print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, {sms} SMs; 1 GiB; median of 30; {rounds} rounds", flush=True)
OPS = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]
EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5, "softmax": 0.0, "log_softmax": 0.0, "l2_normalize": 1e-12}
BYTES = {"f32": 4, "bf16": 2, "f16": 2}
def occupancy(k):
    per_warp = math.ceil(max(k.num_regs, 1) * 32 / 256) * 256
    return max(1, min((65536 // per_warp) // 8, 8))
def median(v):
    s = sorted(v); return s[len(s) // 2]
def time_it(fn, reps=30):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(5): fn()
    ts = []
    for _ in range(reps):
        start.record(); fn(); end.record(); end.synchronize(); ts.append(cp.cuda.get_elapsed_time(start, end))
    return median(ts)
null = np.uint64(0)
for t in types:
    nb = BYTES[t]; pack = 16 // nb
    for width in widths:
        rows = (1 << 30) // (width * nb); elements = rows * width
        f = cp.random.default_rng(11).standard_normal(elements, dtype=cp.float32)
        if t == "f32": inp = f
        elif t == "bf16":
            u = f.view(cp.uint32); inp = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(cp.uint16)
        else: inp = f.astype(cp.float16).view(cp.uint16)
        out = cp.empty_like(inp); del f
        nbytes = elements * nb
        memcpy = lambda: out.data.copy_from_device_async(inp.data, nbytes)
        ppr = width // pack
        shapes = []
        for packs in (1, 2, 4, 8):
            if packs > (8 if nb == 4 else 4) or ppr % packs or ppr // packs > 32: continue
            g = ppr // packs
            if g & (g - 1): continue
            shapes.append((g, packs))
        for op in OPS:
            runs = []
            for g, packs in shapes:
                k, r = find(f"embednorm_warp_{op}_{t}_p{pack}_c{packs}")
                needed = -(-rows // (8 * (32 // g) * r))
                for grid_name, grid in (("1p", min(needed, 1 << 28)), ("res", min(needed, occupancy(k) * sms))):
                    runs.append((f"g{g}c{packs}r{r}/{grid_name}", k, grid, g))
            times = {lab: [] for lab, _, _, _ in runs}
            copies = []
            for rnd in range(rounds):
                copies.append(time_it(memcpy))
                for lab, k, grid, g in (runs if rnd % 2 == 0 else runs[::-1]):
                    args = (inp, out, null, np.int64(rows), np.int32(width), np.int32(g), np.float64(EPS[op]), null, null)
                    times[lab].append(time_it(lambda: k((grid,), (256,), args)))
            copy_ms = median(copies)
            ref = None; notes = []
            for lab, k, grid, g in runs:
                if lab.endswith("/res"): continue
                view = out.view(cp.uint32 if nb == 4 else cp.uint16)
                view.fill(0x7FC00001 if nb == 4 else 0x7FC1)
                k((grid,), (256,), (inp, out, null, np.int64(rows), np.int32(width), np.int32(g), np.float64(EPS[op]), null, null))
                got = view.astype(cp.int64)
                if ref is None: ref = got
                else:
                    diff = int(cp.count_nonzero(got != ref))
                    if diff: notes.append(f"{lab.split('/')[0]}:{diff}diff,max{int(cp.max(cp.abs(got - ref)))}ulp")
            line = f"{t:4s} {width:5d} {op:12s}" + "".join(f"  {lab} {median([100 * copy_ms / x for x in times[lab]]):.1f}" for lab, _, _, _ in runs)
            print(line + ("  " + " ".join(notes) if notes else ""), flush=True)
        del inp, out, ref
        cp.get_default_memory_pool().free_all_blocks()
