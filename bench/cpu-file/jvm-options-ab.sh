#!/usr/bin/env bash
# Two sets of EMBEDNORM_JAVA_OPTS for `bin/embednorm normalize` on /dev/shm/in.arrow in alternating rounds, and a cp.
# With EMBEDNORM_JAVA_OPTS set, bin/embednorm keeps the Vector API module (since 2026-11-27), unlike a plain run.
#   bench/cpu-file/jvm-options-ab.sh OP ROUNDS "OPTS_A" "OPTS_B"
op=$1 rounds=$2 a=$3 b=$4
cd "$(dirname "$0")/../.."
for r in $(seq $rounds); do
  line="round $r:"
  for v in A B; do
    opts=$a; [ $v = B ] && opts=$b
    rm -f /dev/shm/out.arrow; sync
    s=$(date +%s.%N); EMBEDNORM_JAVA_OPTS="$opts" bin/embednorm normalize --device cpu --op $op --input /dev/shm/in.arrow --output /dev/shm/out.arrow >/dev/null 2>&1; e=$(date +%s.%N)
    line+=" $v $(echo "$e - $s" | bc)"
  done
  rm -f /dev/shm/cp.arrow; s=$(date +%s.%N); cp /dev/shm/in.arrow /dev/shm/cp.arrow; e=$(date +%s.%N); rm -f /dev/shm/cp.arrow
  line+=" cp $(echo "$e - $s" | bc)"
  echo "$line"
done
rm -f /dev/shm/out.arrow
