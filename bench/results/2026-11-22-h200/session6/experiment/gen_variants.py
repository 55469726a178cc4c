#!/usr/bin/env python3
"""Session-6 experiment (2026-11-22), benchmark-only: writes tu_<i>.cu, each including base.cu
(embednorm_kernels.cu without its EMBEDNORM_OP entry points), with the warp kernels that the
f32/bf16 tables use at widths 32-1024 (as shipped) and variants of them on warp_rows_lockstep:
  <kernel>_x<tag>_r<R>_m<B>: tag b = lockstep, rows widened to float; k = lockstep, 2-byte rows
  kept raw (RAW); h / kh = the same with LayerNorm's one-tree Chan merge (CHAN); R rows a lane;
  B = min blocks of 256 per SM in __launch_bounds__.
Also manifest.json: kernel name -> rows per lane. Usage: gen_variants.py TUS"""
import json, sys
tus = int(sys.argv[1])
OPS = [("rms_norm", "kRmsNorm"), ("layer_norm", "kLayerNorm"), ("softmax", "kSoftmax"),
       ("log_softmax", "kLogSoftmax"), ("l2_normalize", "kL2Normalize")]
TYPES = {"f32": ("float", 4), "bf16": ("__nv_bfloat16", 8), "f16": ("__half", 8)}

def default_rows(op, nbytes, pack, packs):
    cols = pack * packs
    if cols > 8: return 1
    if cols == 8: return 2
    return 2 if op == "layer_norm" else 4

def default_cap(op, nbytes, pack, packs):
    cols = pack * packs
    norm = op in ("rms_norm", "layer_norm", "l2_normalize")
    if cols > 8: return 2
    if nbytes == 4 and cols == 8 and norm: return 3
    return 4

defaults = []   # (op, t, packs)
variants = []   # (op, t, packs, tag, rows, cap)
for t, packs_list in (("f32", (1, 2, 4, 8)), ("bf16", (1, 2, 4)), ("f16", (1, 2, 4))):
    for packs in packs_list:
        for op, _ in OPS:
            defaults.append((op, t, packs))
ALL = [o for o, _ in OPS]
def add(t, packs, tag, rows, cap, ops=ALL):
    for op in ops:
        variants.append((op, t, packs, tag, rows, cap))
# call 5: f16 layer_norm (rows raw pay a conversion in each of three passes) held widened, and
# the shipped choices (base.cu is this branch's source) as "ship"
add("f16", 1, "b", 2, 4, ["layer_norm"]); add("f16", 1, "b", 3, 4, ["layer_norm"])
add("f16", 1, "b", 4, 3, ["layer_norm"]); add("f16", 1, "b", 3, 3, ["layer_norm"])
add("f16", 2, "b", 1, 3, ["layer_norm"]); add("f16", 2, "b", 2, 2, ["layer_norm"])
add("f16", 4, "b", 1, 2, ["layer_norm"]); add("f16", 4, "b", 2, 2, ["layer_norm"])
add("bf16", 1, "b", 3, 3, ["layer_norm"]); add("bf16", 1, "b", 4, 3, ["layer_norm"])

units = []
manifest = {}
for op, t, packs in defaults:
    ctype, pack = TYPES[t]
    k = f"embednorm_warp_{op}_{t}_p{pack}_c{packs}"
    manifest[k] = default_rows(op, 2 if t != "f32" else 4, pack, packs)
    units.append(f"EMBEDNORM_WARP({op}, {dict(OPS)[op]}, {t}, {ctype}, {pack}, {packs})")
for op, t, packs, tag, rows, cap in variants:
    ctype, pack = TYPES[t]
    raw = "true" if "k" in tag else "false"
    chan = "true" if "h" in tag else "false"
    k = f"embednorm_warp_{op}_{t}_p{pack}_c{packs}_x{tag}_r{rows}_m{cap}"
    manifest[k] = rows
    units.append(f'extern "C" __global__ void __launch_bounds__(256, {cap}) {k} EMBEDNORM_SIGNATURE({ctype}) '
                 f'{{ warp_rows_lockstep<{dict(OPS)[op]}, {ctype}, {pack}, {packs}, {rows}, {raw}>'
                 f'(input, output, offsets, rows, width, group, eps, weight, bias); }}')
for i in range(tus):
    with open(f"tu_{i}.cu", "w") as f:
        f.write('#include "base.cu"\n\n' + "\n".join(units[i::tus]) + "\n")
json.dump(manifest, open("manifest.json", "w"), indent=0)
print(len(defaults), "defaults,", len(variants), "variants in", tus, "units", file=sys.stderr)
