#!/usr/bin/env python3
"""Session-6 experiment (2026-11-22), benchmark-only: for each type and width, times the shipped
warp kernel of each op (as LaunchPlan plans it: same group, rows per lane and grid) against the
variants of gen_variants.py, every kernel on a one-pass grid (a block for each 256 threads' share
of rows) and on the resident grid (the blocks the device holds, each looping), in alternating
rounds; % of cuMemcpyDtoD of the same bytes, median of 30 launches after 5 warm-ups per timing.
Every variant's output is compared with the shipped kernel's, element for element (lockstep and
raw variants must match bit for bit; Chan's merge may differ in the last bits).
Usage: lockstep_bench.py CUBIN_DIR TYPES WIDTHS ROUNDS"""
import glob, json, math, os, sys
import numpy as np
import cupy as cp

cubins, types, widths, rounds = sys.argv[1], sys.argv[2].split(","), [int(w) for w in sys.argv[3].split(",")], int(sys.argv[4])
manifest = json.load(open(os.path.join(cubins, "manifest.json")))
kernels = {}
for path in sorted(glob.glob(os.path.join(cubins, "*.cubin"))):
    module = cp.RawModule(path=path)
    for name in manifest:
        try:
            kernels[name] = module.get_function(name)
        except Exception:
            continue
        try:  # shipped kernels carry their rows per lane
            manifest[name] = int(cp.ndarray((1,), cp.int32, module.get_global(name + "_rows")).get()[0])
        except Exception:
            pass
missing = [k for k in manifest if k not in kernels]
if missing:
    print("MISSING", missing[:5], len(missing), flush=True)
dev = cp.cuda.Device(0)
sms = dev.attributes["MultiProcessorCount"]
print(f"# {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, {sms} SMs; 1 GiB of input; median of 30; {rounds} rounds", flush=True)
for name in sorted(kernels):
    k = kernels[name]
    print(f"# regs {name} {k.num_regs} local {k.local_size_bytes}")

OPS = ["rms_norm", "layer_norm", "softmax", "log_softmax", "l2_normalize"]
EPS = {"rms_norm": 1e-6, "layer_norm": 1e-5, "softmax": 0.0, "log_softmax": 0.0, "l2_normalize": 1e-12}
BYTES = {"f32": 4, "bf16": 2, "f16": 2}

def occupancy(k):
    regs = max(k.num_regs, 1)
    per_warp = math.ceil(regs * 32 / 256) * 256
    return max(1, min((65536 // per_warp) // 8, 8))

def one_pass_planned(op, t, packs, full):  # LaunchPlan.onePassWarpGrid (this branch)
    norm = op in ("rms_norm", "l2_normalize")
    if t == "f32":
        return {1: op != "layer_norm", 2: True, 4: full}.get(packs, op != "layer_norm" or full)
    if packs <= 2:
        return norm or op == "log_softmax"
    return norm and full

def median(values):
    s = sorted(values)
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
        rows = (1 << 30) // (width * nb)
        elements = rows * width
        rng = cp.random.default_rng(42)
        f = rng.standard_normal(elements, dtype=cp.float32)
        if t == "f32":
            inp = f
            out = cp.empty_like(f)
        else:
            if t == "bf16":
                u = f.view(cp.uint32)
                inp = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(cp.uint16)
            else:
                inp = f.astype(cp.float16).view(cp.uint16)
            out = cp.empty_like(inp)
        del f
        nbytes = elements * nb
        memcpy = lambda: out.data.copy_from_device_async(inp.data, nbytes)
        packs_per_row = width // pack
        group = 1 << max(0, (packs_per_row - 1).bit_length()) if packs_per_row <= 32 else 32
        packs = 1 if packs_per_row <= 32 else 1 << ((-(-packs_per_row // 32)) - 1).bit_length()
        full = packs_per_row == 32 * packs
        for op in OPS:
            stem = f"embednorm_warp_{op}_{t}_p{pack}_c{packs}"
            names = [stem] + sorted(n for n in kernels if n.startswith(stem + "_x"))
            runs = []  # (label, kernel, grid)
            for name in names:
                k = kernels[name]
                r = manifest[name]
                per_block = 8 * (32 // group) * r
                needed = -(-rows // per_block)
                one = min(needed, 1 << 28)
                res = min(needed, occupancy(k) * sms)
                label = "ship" if name == stem else name[len(stem) + 2:]
                runs.append((label + "/1p", k, one))
                runs.append((label + "/res", k, res))
            args = lambda k: (inp, out, null, np.int64(rows), np.int32(width), np.int32(group), np.float64(EPS[op]), null, null)
            times = {label: [] for label, _, _ in runs}
            copies = []
            for rnd in range(rounds):
                order = runs if rnd % 2 == 0 else runs[::-1]
                copies.append(time_it(memcpy))
                for label, k, grid in order:
                    times[label].append(time_it(lambda: k((grid,), (256,), args(k))))
            copy_ms = median(copies)
            # outputs against the shipped kernel's
            ref = None
            notes = []
            for label, k, grid in runs:
                if label.endswith("/res"):
                    continue
                out.view(cp.uint32 if nb == 4 else cp.uint16).fill(0x7FC00001 if nb == 4 else 0x7FC1)
                k((grid,), (256,), args(k))
                cp.cuda.Device().synchronize()
                got = out.view(cp.uint32 if nb == 4 else cp.uint16).copy()
                if ref is None:
                    ref = got
                else:
                    diff = int(cp.count_nonzero(got != ref))
                    if diff:
                        a = ref.astype(cp.int64); b = got.astype(cp.int64)
                        notes.append(f"{label.split('/')[0]}:{diff}diff,max{int(cp.max(cp.abs(a - b)))}ulp")
            planned = "1p" if one_pass_planned(op, t, packs, full) else "res"
            line = f"{t:4s} {width:5d} {op:12s} g{group} c{packs} ship:{planned} copy {2 * nbytes / copy_ms / 1e6:.0f}GB/s"
            for label, _, grid in runs:
                pct = [100 * copy_ms / x for x in times[label]]
                line += f"  {label} {median(pct):.1f}"
            print(line + ("  " + " ".join(notes) if notes else ""), flush=True)
        del inp, out
        cp.get_default_memory_pool().free_all_blocks()
