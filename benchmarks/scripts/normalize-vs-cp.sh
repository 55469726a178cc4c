#!/usr/bin/env bash
# The file command against cp: wall time of `bin/embednorm normalize --device D` on an Arrow IPC
# file for each device D of DEVICES (default: cpu), against its peer `cp` of the same file (and
# `cp` + `sync`), the input in the page cache, in alternating rounds; a line per round, then the
# median of each column in seconds, and the device each normalize ran on. The outputs are written
# to SCRATCH_DIR (e.g. /dev/shm) and removed at the end.
#   [DEVICES="cpu gpu auto"] [NORMALIZE="command"] benchmarks/scripts/normalize-vs-cp.sh INPUT SCRATCH_DIR ROUNDS OP
# e.g. bin/embednorm generate --rows 350000 --dim 768 --format arrow --output /dev/shm/in.arrow
#      benchmarks/scripts/normalize-vs-cp.sh /dev/shm/in.arrow /dev/shm 5 rms_norm
# On a GPU host without a JDK, from the bundle of benchmarks/scripts/gpu-bundle.sh --spark:
#      DEVICES="cpu gpu auto" NORMALIZE=".gpu/java -cp $(.gpu/cp) io.embednorm.jobs.cli.NormalizeCommand" \
#        benchmarks/scripts/normalize-vs-cp.sh /dev/shm/in.arrow /dev/shm 3 rms_norm
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
[ $# -eq 4 ] || { echo "usage: $0 INPUT SCRATCH_DIR ROUNDS OP" >&2; exit 2; }
input=$1 dir=$2 rounds=$3 op=$4
devices=${DEVICES:-cpu}
read -r -a normalize <<<"${NORMALIZE:-$root/bin/embednorm normalize}"
cat "$input" >/dev/null
# One untimed run first: it builds the project if the sources changed, which a timed first round
# would otherwise pay for.
"${normalize[@]}" --device cpu --op "$op" --input "$input" --output "$dir/out.arrow" >/dev/null 2>&1 || true
rm -f "$dir/out.arrow"
seconds() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1; end=$(date +%s%N); awk -v n=$((end - start)) 'BEGIN { printf "%.3f", n / 1e9 }'; }
declare -A times
for round in $(seq "$rounds"); do
  line="round $round:"
  rm -f "$dir/cp.arrow"; sync
  t=$(seconds cp "$input" "$dir/cp.arrow"); times[cp]+="$t "; line+=" cp $t"
  rm -f "$dir/cp.arrow"; sync
  t=$(seconds sh -c "cp '$input' '$dir/cp.arrow' && sync '$dir/cp.arrow'"); times[cp+sync]+="$t "; line+=" cp+sync $t"
  for device in $devices; do
    rm -f "$dir/cp.arrow" "$dir/out.arrow"; sync
    t=$(seconds "${normalize[@]}" --device "$device" --op "$op" --input "$input" --output "$dir/out.arrow")
    [ -s "$dir/out.arrow" ] || { echo "normalize --device $device failed" >&2; exit 1; }
    times[normalize-$device]+="$t "; line+=" normalize-$device $t"
  done
  echo "$line"
done
# Where each device choice ran, from the command's summary line.
for device in $devices; do
  echo "normalize --device $device: $("${normalize[@]}" --device "$device" --op "$op" --input "$input" --output "$dir/out.arrow" 2>/dev/null | grep -o 'on [a-z]* (.*)' | head -c 300)"
  rm -f "$dir/out.arrow"
done
rm -f "$dir/cp.arrow" "$dir/out.arrow"
for key in "${!times[@]}"; do
  echo "$key median $(echo ${times[$key]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}') s"
done | sort
