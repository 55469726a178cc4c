#!/usr/bin/env bash
# The paths users run, on the GPU host, each next to its peer in the same run (docs/PERFORMANCE.md,
# "User paths"): the Arrow API on pinned and on ordinary Arrow memory (PipelineBenchmark), where auto
# switches device by call size (DeviceCrossoverBenchmark), `normalize` on a 3 GB Arrow file against cp
# with --device cpu, gpu and auto (normalize-vs-cp.sh), the job's outputs against the plain Spark copy
# on both devices (JobBenchmark, outputs compared with pyarrow), and the SQL query benchmark against
# its passthrough (SparkQueryBenchmark). Needs the bundle of `benchmarks/scripts/gpu-bundle.sh
# --spark`, pyarrow and /dev/shm with 8 GB free. Raw output goes to OUTPUT_DIR; STEPS picks steps.
# DEVICES picks the devices of the job and SQL steps, ROWS their rows; SPREAD=0 leaves out the
# spread over two GPUs.
#   [STEPS="pipeline crossover file job sql"] [DEVICES="gpu cpu"] [ROWS=1000000] \
#     benchmarks/scripts/gpu-user-paths.sh OUTPUT_DIR
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
output=${1:?usage: $0 OUTPUT_DIR}
steps=${STEPS:-pipeline crossover file job sql}
devices=${DEVICES:-gpu cpu}
rows=${ROWS:-1000000}
mkdir -p "$output"
java=(.gpu/java -Xmx48g -cp "$(.gpu/cp)")
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$output/gpus.txt"
gpus=$(wc -l <"$output/gpus.txt")
step() { [[ " $steps " == *" $1 "* ]]; }

if step pipeline; then
  spread=()
  [ "$gpus" -ge 2 ] && [ "${SPREAD:-1}" = 1 ] && spread=(--gpus 0,1)
  timeout 300 "${java[@]}" io.embednorm.benchmarks.PipelineBenchmark --widths 768,4096 --gib 4 \
    --repeats 3 --chunks-mib 16 "${spread[@]}" >"$output/pipeline.txt" 2>&1
  echo "pipeline: exit $?"
fi

if step crossover; then
  timeout 120 "${java[@]}" io.embednorm.benchmarks.DeviceCrossoverBenchmark --width 768 \
    >"$output/crossover.txt" 2>&1
  echo "crossover: exit $?"
fi

if step file; then
  # 1,000,000 rows of 768 float32 (3.07 GB), an id column beside, as `generate --format arrow` writes.
  python3 - <<'EOF'
import numpy as np, pyarrow as pa
rows, dim, per_batch = 1_000_000, 768, 100_000
rng = np.random.default_rng(7)
schema = pa.schema([("id", pa.int64()), ("embedding", pa.list_(pa.float32(), dim))])
with pa.OSFile("/dev/shm/user-paths-in.arrow", "wb") as sink, pa.ipc.new_file(sink, schema) as writer:
    for start in range(0, rows, per_batch):
        values = rng.standard_normal(per_batch * dim, dtype=np.float32)
        embedding = pa.FixedSizeListArray.from_arrays(pa.array(values), dim)
        writer.write_batch(pa.record_batch([pa.array(np.arange(start, start + per_batch)), embedding], schema=schema))
EOF
  DEVICES="cpu gpu auto" NORMALIZE="${java[*]} io.embednorm.jobs.cli.NormalizeCommand" \
    timeout 300 benchmarks/scripts/normalize-vs-cp.sh /dev/shm/user-paths-in.arrow /dev/shm 3 rms_norm \
    >"$output/file.txt" 2>&1
  echo "file: exit $?"
  rm -f /dev/shm/user-paths-in.arrow
fi

if step job; then
  for device in $devices; do
    timeout 400 "${java[@]}" io.embednorm.benchmarks.JobBenchmark --rows "$rows" --dim 768 \
      --device "$device" --rounds 2 --work /dev/shm/job-bench >"$output/job-$device.txt" 2>&1
    echo "job $device: exit $?"
    python3 benchmarks/scripts/job_output_check.py /dev/shm/job-bench/job-parquet \
      /dev/shm/job-bench/job-arrow >>"$output/job-$device.txt" 2>&1
    echo "job $device check: exit $?"
  done
  rm -rf /dev/shm/job-bench
fi

if step sql; then
  for device in $devices; do
    timeout 300 "${java[@]}" io.embednorm.benchmarks.SparkQueryBenchmark --rows "$rows" \
      --device "$device" --data /dev/shm/sql-bench >"$output/sql-$device.txt" 2>&1
    echo "sql $device: exit $?"
  done
  rm -rf /dev/shm/sql-bench
fi
