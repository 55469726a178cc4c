#!/usr/bin/env python3
"""Session-6 experiment: torch.compile's bf16 layer_norm at width 256 (and rms_norm), for its
generated Triton kernel and launch shape. Run with TORCH_LOGS=output_code and
TORCHINDUCTOR_CACHE_DIR set; prints the timing against a device copy."""
import torch, torch.nn.functional as F
from triton.testing import do_bench
torch.manual_seed(0)
for width in (256, 1024):
    rows = (1 << 30) // (width * 2)
    x = torch.randn(rows, width, device="cuda", dtype=torch.bfloat16)
    for name, fn in (("layer_norm", lambda t: F.layer_norm(t, (width,))),):
        torch._dynamo.reset()
        c = torch.compile(fn, dynamic=False)
        y = c(x); torch.cuda.synchronize()
        ms = do_bench(lambda: c(x), warmup=25, rep=100, return_mode="median")
        cp = do_bench(lambda: y.copy_(x), warmup=25, rep=100, return_mode="median")
        print(f"TRITON {name} bf16 {width}: {ms*1e3:.1f} us, copy {cp*1e3:.1f} us, {100*cp/ms:.1f} % of copy", flush=True)
