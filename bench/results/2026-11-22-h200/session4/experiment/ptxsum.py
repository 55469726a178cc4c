import re,sys
cur=None; res={}
for line in open(sys.argv[1]):
    m=re.search(r"Function properties for (\S+)",line)
    if m: cur=m.group(1); continue
    m=re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",line)
    if m and cur: res.setdefault(cur,{}).update(stack=int(m.group(1)),ss=int(m.group(2)),sl=int(m.group(3))); continue
    m=re.search(r"Used (\d+) registers",line)
    if m and cur: res[cur]['regs']=int(m.group(1)); cur=None
pat=sys.argv[2] if len(sys.argv)>2 else 'embednorm_warp_'
for k in sorted(res):
    if k.startswith(pat) or pat=='all':
        r=res[k]
        flag=' SPILL' if r['ss'] or r['sl'] else ''
        if len(sys.argv)>3 and not flag: continue
        print(f"{k:50s} regs {r.get('regs'):3d} stack {r['stack']:3d} spill {r['ss']}/{r['sl']}{flag}")
