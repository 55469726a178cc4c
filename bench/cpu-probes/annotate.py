"""Per-instruction profile of C2-compiled methods without hsdis (bench/cpu-probes/README.md).

Usage: annotate.py PRINT_ASSEMBLY_OUTPUT PERF_IPS  -> /tmp/annot_METHOD.s (samples, address, instruction)
"""
import sys,re,subprocess,collections
asm, ips = sys.argv[1], sys.argv[2]
lines=open(asm).read().split('\n')
starts=[i for i,l in enumerate(lines) if l.startswith('Compiled method (c2)')]
hits=collections.Counter()
for l in open(ips):
    c,ip=l.split(); hits[int(ip,16)]+=int(c)
total=sum(hits.values())
for st in starts:
    name=lines[st].split()[-3]
    code=bytearray(); start=None; inmc=False
    for l in lines[st:]:
        if l.startswith('[MachCode]'): inmc=True; continue
        if inmc and (l.startswith('[Exception') or l.startswith('[Stub Code]') or l.startswith('-----')): break
        m=re.match(r'\s+0x([0-9a-f]+): ([0-9a-f |]+)$',l)
        if inmc and m:
            addr=int(m.group(1),16); hx=m.group(2).replace('|','').replace(' ','')
            if start is None: start=addr
            if addr!=start+len(code): code+=b'\x90'*(addr-start-len(code))
            code+=bytes.fromhex(hx)
    open('/tmp/c.bin','wb').write(code)
    out=subprocess.run(['objdump','-D','-b','binary','-mi386:x86-64','--adjust-vma=%#x'%start,'/tmp/c.bin'],capture_output=True,text=True).stdout
    mh=sum(v for k,v in hits.items() if start<=k<start+len(code))
    print('=====',name,'samples',mh,'of',total)
    with open('/tmp/annot_%s.s'%name.split('::')[-1],'w') as f:
        for l in out.split('\n'):
            m=re.match(r'\s*([0-9a-f]+):\t',l)
            h=hits.get(int(m.group(1),16),0) if m else 0
            parts=l.split('\t')
            f.write('%6d %s\n'%(h, (parts[0]+' '+parts[-1]) if len(parts)>2 else l))
