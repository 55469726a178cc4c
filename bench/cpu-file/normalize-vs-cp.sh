#!/usr/bin/env bash
# `bin/embednorm normalize --device cpu` against `cp` of the same Arrow file, the input in the page
# cache (issue 6), in alternating rounds; the median of each column last. Variants are arrow-bridge
# jars swapped in before each run (none: the jar as built).
#   bench/cpu-file/normalize-vs-cp.sh INPUT OUTPUT_DIR ROUNDS OP [NAME=JAR ...]
# e.g. bin/embednorm generate --rows 350000 --dim 768 --format arrow --output /dev/shm/in.arrow
#      bench/cpu-file/normalize-vs-cp.sh /dev/shm/in.arrow /dev/shm 5 rms_norm
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
input=$1 dir=$2 rounds=$3 op=$4; shift 4
jar="$root/arrow-bridge/target/embednorm-arrow-bridge-0.1.0-SNAPSHOT.jar"
variants=("$@"); [ ${#variants[@]} -eq 0 ] && variants=("built=")
cat "$input" >/dev/null
# One untimed run first: it builds the project if the sources changed and writes normalize's
# class-data archive (bin/embednorm), which a timed first round would otherwise pay for.
"$root/bin/embednorm" normalize --device cpu --op "$op" --input "$input" --output "$dir/out.arrow" >/dev/null 2>&1 || true
rm -f "$dir/out.arrow"
seconds() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N); echo "$end - $start" | bc; }
declare -A times
for round in $(seq "$rounds"); do
  line="round $round:"
  rm -f "$dir/cp.arrow"; sync
  t=$(seconds cp "$input" "$dir/cp.arrow"); times[cp]+="$t "; line+=" cp $t"
  rm -f "$dir/cp.arrow"; sync
  t=$(seconds sh -c "cp '$input' '$dir/cp.arrow' && sync '$dir/cp.arrow'"); times[cp+sync]+="$t "; line+=" cp+sync $t"
  for variant in "${variants[@]}"; do
    name=${variant%%=*} file=${variant#*=}
    [ -n "$file" ] && cp "$file" "$jar"
    rm -f "$dir/cp.arrow" "$dir/out.arrow"; sync
    t=$(seconds "$root/bin/embednorm" normalize --device cpu --op "$op" --input "$input" --output "$dir/out.arrow")
    [ -s "$dir/out.arrow" ] || { echo "normalize failed ($name)" >&2; exit 1; }
    times[$name]+="$t "; line+=" $name $t"
  done
  echo "$line"
done
rm -f "$dir/cp.arrow" "$dir/out.arrow"
for key in "${!times[@]}"; do
  echo "$key median $(echo ${times[$key]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') s"
done | sort
