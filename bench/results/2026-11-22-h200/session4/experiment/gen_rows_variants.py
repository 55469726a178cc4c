#!/usr/bin/env python3
"""Writes rows_variants.cu: embednorm_kernels.cu plus, for the warp path, the same kernels with
other rows per lane (R) and register caps (B = min blocks of 256 per SM in __launch_bounds__),
named <default name>_r<R>_b<B>; and copy-kernel variants embednorm_copyx_*. Benchmark-only
(session 4 experiment, 2026-11-22); never part of the shipped fatbin."""
import sys
src = sys.argv[1]
ops = [("rms_norm", "kRmsNorm"), ("layer_norm", "kLayerNorm"), ("softmax", "kSoftmax"),
       ("log_softmax", "kLogSoftmax"), ("l2_normalize", "kL2Normalize")]
types = [("f32", "float", [(1, [1, 2, 4, 8]), (4, [1, 2, 4, 8])]),
         ("f16", "__half", [(1, [1, 2, 4, 8]), (8, [1, 2, 4])]),
         ("bf16", "__nv_bfloat16", [(1, [1, 2, 4, 8]), (8, [1, 2, 4])]),
         ("f64", "double", [(1, [1, 2, 4, 8]), (2, [1, 2, 4, 8])])]
out = [f'#include "{src}"', "",
       "#define EXP_WARP(OP_NAME, OP, NAME, T, PACK, PACKS, R, B) \\",
       "  extern \"C\" __global__ void __launch_bounds__(256, B) \\",
       "      embednorm_warp_##OP_NAME##_##NAME##_p##PACK##_c##PACKS##_r##R##_b##B EMBEDNORM_SIGNATURE(T) { \\",
       "    warp_rows<OP, T, PACK, PACKS, R>(input, output, offsets, rows, width, group, eps, weight, bias); \\",
       "  }", ""]
n = 0
spilling = set(open(sys.argv[2]).read().split())
for op, k in ops:
    for name, t, packs in types:
        for pack, cs in packs:
            for c in cs:
                cols = pack * c
                default = (2 if k == "kLayerNorm" else 4) if cols <= 4 else 2 if cols <= 8 else 1
                kernel = f"embednorm_warp_{op}_{name}_p{pack}_c{c}"
                packed_narrow = (name, pack, c) in {("f32", 4, 1), ("f32", 4, 2), ("f16", 8, 1), ("bf16", 8, 1)}
                variants = []
                if packed_narrow:  # every rows/cap combination for the widths 32-256 of the tables
                    for r in (1, 2, 4):
                        if r * cols <= 16:
                            variants.append((r, 4))
                            if r >= 2 and r * cols >= 8:
                                variants.append((r, 3))
                    # fewer registers, more warps per SM
                    variants += [(1, 6), (1, 8), (2, 6)]
                elif kernel in spilling:  # kernels that spill by default: fewer rows, or more registers
                    variants = [(r, 4) for r in (1, 2) if r < default]
                    variants.append((default, 3 if cols <= 8 else 1))
                for r, b in variants:
                    out.append(f"EXP_WARP({op}, {k}, {name}, {t}, {pack}, {c}, {r}, {b})")
                    n += 1
out += ["",
        "namespace {",
        "template <int LOADS, bool STREAM>",
        "__device__ __forceinline__ void copy_variant(const uint4* __restrict__ input, uint4* __restrict__ output, long long bytes) {",
        "  const long long packs = bytes >> 4;",
        "  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;",
        "  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;",
        "  for (; i + (LOADS - 1) * stride < packs; i += LOADS * stride) {",
        "    uint4 values[LOADS];",
        "#pragma unroll",
        "    for (int u = 0; u < LOADS; ++u) values[u] = STREAM ? __ldcs(input + i + u * stride) : input[i + u * stride];",
        "#pragma unroll",
        "    for (int u = 0; u < LOADS; ++u) { if (STREAM) __stcs(output + i + u * stride, values[u]); else output[i + u * stride] = values[u]; }",
        "  }",
        "  for (; i < packs; i += stride) output[i] = input[i];",
        "  const int tail = static_cast<int>(bytes & 15);",
        "  if (blockIdx.x == 0 && static_cast<int>(threadIdx.x) < tail) {",
        "    const long long at = (packs << 4) + threadIdx.x;",
        "    reinterpret_cast<unsigned char*>(output)[at] = reinterpret_cast<const unsigned char*>(input)[at];",
        "  }",
        "}",
        "}  // namespace",
        ]
for loads in (1, 2, 8):
    out.append(f'extern "C" __global__ void __launch_bounds__(256) embednorm_copyx_l{loads}(const uint4* __restrict__ input, uint4* __restrict__ output, long long bytes) {{ copy_variant<{loads}, false>(input, output, bytes); }}')
for loads in (4, 8):
    out.append(f'extern "C" __global__ void __launch_bounds__(256) embednorm_copyx_l{loads}_cs(const uint4* __restrict__ input, uint4* __restrict__ output, long long bytes) {{ copy_variant<{loads}, true>(input, output, bytes); }}')
open("rows_variants.cu", "w").write("\n".join(out) + "\n")
print(n, "warp variants", file=sys.stderr)
