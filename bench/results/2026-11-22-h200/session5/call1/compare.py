#!/usr/bin/env python3
# Session 5, call 1: medians of the three rounds per (fallback call|inline, grid, type, width, op),
# % of each run's copy, and before (call, old LaunchPlan) -> after (inline, new LaunchPlan).
#   python3 compare.py bench/results/2026-11-22-h200/session5/call1
import re,glob,statistics,sys
OPS=["rms_norm","layer_norm","softmax","log_softmax","l2_normalize"]
ROW=re.compile(r"^(f32|bf16|f16)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+%\s+[\d.]+%\s+(.*)$")
d={}
for f in glob.glob(sys.argv[1]+"/bench-*.txt"):
    v,g,r=f.split("/")[-1][6:-4].split("-")
    for line in open(f):
        m=ROW.match(line)
        if not m: continue
        t,w,copy=m.group(1),int(m.group(2)),float(m.group(4))
        gbs=[float(x) for x in re.findall(r"(\d+) \(\s*\d+%\)",m.group(6))]
        for op,x in zip(OPS,gbs): d.setdefault((v,g,t,w,op),[]).append(100*x/copy)
med={k:statistics.median(x) for k,x in d.items()}
rng={k:max(x)-min(x) for k,x in d.items()}
cfg=[("call","resident"),("call","onePass"),("inline","resident"),("inline","onePass")]
print("type width op: call-res call-1p inline-res inline-1p (median of 3; max spread)")
for t in ["f32","bf16"]:
  for w in [32,64,128,256,300,512,768,769,1024]:
    for op in OPS:
      vals=[med[(v,g,t,w,op)] for v,g in cfg]
      sp=max(rng[(v,g,t,w,op)] for v,g in cfg)
      print(f"{t:4s} {w:5d} {op:13s} "+"  ".join(f"{x:5.1f}" for x in vals)+f"   spread {sp:.1f}")
def packs(t,w):
    pack=4 if t=="f32" else 8
    if w%pack: return None
    ppr=-(-w//pack)
    if ppr<=32: return 1,ppr
    c=1
    while c< -(-ppr//32): c*=2
    return c,ppr
def old(op,t,w):
    p=packs(t,w)
    if p is None or t!="f32": return "resident"
    c,_=p
    if op=="softmax": return "onePass"
    if op=="log_softmax": return "onePass" if c!=4 else "resident"
    if op in("rms_norm","l2_normalize"): return "onePass" if c==1 else "resident"
    return "resident"
def new(op,t,w):
    p=packs(t,w)
    if p is None or t!="f32": return "resident"
    c,ppr=p
    if op=="layer_norm": return "onePass" if c==2 else "resident"
    if c==4: return "onePass" if ppr==32*c else "resident"
    if c==8: return "onePass" if op!="rms_norm" else "resident"
    return "onePass"
print("\nbefore (call, old plan) -> after (inline, new plan); |change|>=1.5 listed")
tot=0
for t in ["f32","bf16"]:
  for w in [32,64,128,256,300,512,768,769,1024]:
    for op in OPS:
      b=med[("call",old(op,t,w),t,w,op)]; a=med[("inline",new(op,t,w),t,w,op)]
      tgt=90 if w<128 else 97
      if abs(a-b)>=1.5: print(f"{t} {w} {op}: {b:.1f} -> {a:.1f} ({a-b:+.1f}) [{old(op,t,w)}->{new(op,t,w)}]")
      tot+= (a>=tgt)-(b>=tgt)
print("target cells gained:",tot)
