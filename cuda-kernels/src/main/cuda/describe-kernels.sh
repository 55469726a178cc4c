#!/usr/bin/env bash
# Describes embednorm's kernels for the planner's tests, which run without a GPU (LaunchPlanTest):
#   describe-kernels.sh OUTPUT_DIRECTORY
# writes there embednorm_tuning.txt, the tables the kernels export (printed by print_tuning.cu from
# tuning.cuh), and embednorm_kernels.txt, the name of every kernel embednorm_kernels.cu defines
# (from its preprocessing for sm_90, where every path is built). Called by the Maven build
# (cuda-kernels/pom.xml) into the test classes; skipped with -Dembednorm.cpuOnly.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
output=$1
source "$here/nvcc.sh"
up_to_date=true
for input in "$here"/*.cu "$here"/*.cuh "$0" "$here/nvcc.sh"; do
  for made in "$output/embednorm_tuning.txt" "$output/embednorm_kernels.txt"; do
    [ -f "$made" ] && [ "$made" -nt "$input" ] || up_to_date=false
  done
done
if $up_to_date; then
  echo "embednorm: kernel description is up to date ($output)"
  exit 0
fi
mkdir -p "$output"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$nvcc" -std=c++17 -o "$work/print_tuning" "$here/print_tuning.cu"
"$work/print_tuning" >"$output/embednorm_tuning.txt"
# Every kernel has the one signature, (const T* input, ...): its name is what precedes it.
"$nvcc" -E -std=c++17 -x cu -arch=sm_90 "$here/embednorm_kernels.cu" -o "$work/kernels.ii"
grep -oE '\bembednorm_[a-z0-9_]+ *\( *const\b' "$work/kernels.ii" | sed -E 's/ *\( *const$//' |
  sort -u >"$output/embednorm_kernels.txt"
echo "embednorm: described $(wc -l <"$output/embednorm_kernels.txt") kernels in $output"
