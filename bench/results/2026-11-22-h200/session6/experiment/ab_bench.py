#!/usr/bin/env python3
"""Session-6 check (2026-11-22), benchmark-only: the shipped warp kernels of two builds (OLD =
main's embednorm_kernels.cu, NEW = this branch's) for f32/bf16/f16 rows of 16-byte packs, each on
its planned grid and on the other, rows per lane read from the module's <kernel>_rows; NEW's
outputs compared bit for bit with OLD's. Usage: ab_bench.py OLD_DIR NEW_DIR TYPES WIDTHS ROUNDS"""
import glob, math, os, sys
import numpy as np
import cupy as cp

old_dir, new_dir = sys.argv[1], sys.argv[2]
types, widths, rounds = sys.argv[3].split(","), [int(w) for w in sys.argv[4].split(",")], int(sys.argv[5])
sets = {}
for label, d in (("old", old_dir), ("new", new_dir)):
    sets[label] = [cp.RawModule(path=p) for p in sorted(glob.glob(os.path.join(d, "*.cubin")))]

def find(label, name):
    for m in sets[label]:
        try:
            f = m.get_function(name)
        except Exception:
            continue
        rows = int(cp.ndarray((1,), cp.int32, m.get_global(name + "_rows")).get()[0])
        return f, rows
    raise KeyError(label + ":" + name)

sms = cp.cuda.Device(0).attributes["MultiProcessorCount"]
print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, {sms} SMs; 1 GiB; median of 30; {rounds} rounds", flush=True)
OPS = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]
EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5, "softmax": 0.0, "log_softmax": 0.0, "l2_normalize": 1e-12}
BYTES = {"f32": 4, "bf16": 2, "f16": 2}

def occupancy(k):
    per_warp = math.ceil(max(k.num_regs, 1) * 32 / 256) * 256
    return max(1, min((65536 // per_warp) // 8, 8))

def one_pass_old(op, t, packs, full):
    if t != "f32":
        return False
    if op == "layer_norm":
        return packs == 2
    return {4: full, 8: op != "rms_norm"}.get(packs, True)

def one_pass_new(op, t, packs, full):
    norm = op in ("rms_norm", "l2_normalize")
    if t == "f32":
        return {1: op != "layer_norm", 2: True, 4: full}.get(packs, op != "layer_norm" or full)
    if packs <= 2:
        return norm or op == "log_softmax"
    return norm and full

def median(v):
    s = sorted(v)
    return s[len(s) // 2]

def time_it(fn, reps=30):
    start, end = cp.cuda.Event(), cp.cuda.Event()
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        start.record(); fn(); end.record(); end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    return median(times)

null = np.uint64(0)
for t in types:
    nb = BYTES[t]
    pack = 16 // nb
    for width in widths:
        if width % pack:
            continue
        rows = (1 << 30) // (width * nb)
        elements = rows * width
        f = cp.random.default_rng(7).standard_normal(elements, dtype=cp.float32)
        if t == "f32":
            inp = f
        elif t == "bf16":
            u = f.view(cp.uint32)
            inp = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(cp.uint16)
        else:
            inp = f.astype(cp.float16).view(cp.uint16)
        out = cp.empty_like(inp)
        del f
        nbytes = elements * nb
        memcpy = lambda: out.data.copy_from_device_async(inp.data, nbytes)
        ppr = width // pack
        group = 1 << max(0, (ppr - 1).bit_length()) if ppr <= 32 else 32
        packs = 1 if ppr <= 32 else 1 << ((-(-ppr // 32)) - 1).bit_length()
        full = ppr == 32 * packs
        for op in OPS:
            name = f"embednorm_warp_{op}_{t}_p{pack}_c{packs}"
            runs = []
            plan = {}
            for label, rule in (("old", one_pass_old), ("new", one_pass_new)):
                k, r = find(label, name)
                needed = -(-rows // (8 * (32 // group) * r))
                one, res = min(needed, 1 << 28), min(needed, occupancy(k) * sms)
                plan[label] = "1p" if rule(op, t, packs, full) else "res"
                runs += [(f"{label}/1p", k, one, r), (f"{label}/res", k, res, r)]
            args = (inp, out, null, np.int64(rows), np.int32(width), np.int32(group), np.float64(EPS[op]), null, null)
            times = {lab: [] for lab, _, _, _ in runs}
            copies = []
            for rnd in range(rounds):
                copies.append(time_it(memcpy))
                for lab, k, g, _ in (runs if rnd % 2 == 0 else runs[::-1]):
                    times[lab].append(time_it(lambda: k((g,), (256,), args)))
            copy_ms = median(copies)
            got = {}
            for lab, k, g, _ in runs:
                out.view(cp.uint32 if nb == 4 else cp.uint16).fill(0x7FC00001 if nb == 4 else 0x7FC1)
                k((g,), (256,), args)
                got[lab] = out.view(cp.uint32 if nb == 4 else cp.uint16).copy()
            same = all(bool(cp.array_equal(got["old/1p"], v)) for v in got.values())
            pct = {lab: median([100 * copy_ms / x for x in times[lab]]) for lab in times}
            before, after = pct["old/" + plan["old"]], pct["new/" + plan["new"]]
            line = (f"{t:4s} {width:5d} {op:12s} c{packs} rows {runs[0][3]}->{runs[2][3]} "
                    f"planned {before:5.1f} -> {after:5.1f} ({after - before:+5.1f})  ")
            line += "  ".join(f"{lab} {pct[lab]:.1f}" for lab in pct)
            line += f"  grids {plan['old']}->{plan['new']}" + ("" if same else "  OUTPUTS DIFFER")
            print(line, flush=True)
        del inp, out
        cp.get_default_memory_pool().free_all_blocks()
