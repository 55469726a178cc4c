#!/usr/bin/env bash
# rounds of: cp, then each spec "label=op=javaopts", each preceded by rm + sync
cd /work/main
rounds=$1; shift
t() { local s=$(date +%s.%N); "$@"; local e=$(date +%s.%N); echo "$e - $s" | bc | cut -c1-5; }
norm() { bin/embednorm normalize --device cpu --op $1 --input /tmp/issue6-files/in.arrow --output /tmp/issue6-files/out.arrow 2>/tmp/issue6-files/err.txt >/dev/null || echo FAIL >&2; }
for r in $(seq $rounds); do
  rm -f /tmp/issue6-files/cp.arrow; sync
  line="cp $(t cp /tmp/issue6-files/in.arrow /tmp/issue6-files/cp.arrow)"
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; op=${rest%%=*}; opts=${rest#*=}
    rm -f /tmp/issue6-files/out.arrow; sync
    line="$line  $label $(EMBEDNORM_JAVA_OPTS="$opts" t norm $op)"
  done
  echo "$line"
done
rm -f /tmp/issue6-files/cp.arrow /tmp/issue6-files/out.arrow
