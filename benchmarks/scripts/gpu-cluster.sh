#!/usr/bin/env bash
# The several-GPU cluster run: on this host, a Spark standalone master and one worker per GPU (each
# worker owns one GPU through spark.worker.resourcesFile, so no two executors share one), first
# with one worker, then with one per GPU. Each round runs the normalize job (Parquet -> Parquet,
# rms_norm, spark.embednorm.device=gpu) and the SQL benchmark on the table cached in executor
# memory (SparkQueryBenchmark --cache), while nvidia-smi samples every GPU's utilization; then it
# checks that every round wrote the same rows (pyarrow, bit for bit) and prints one table.
#
# On the GPU host, from the repository root, after `gpu-bundle.sh --spark` here and its folders sent
# (.gpu-jre, .gpu, .gpu-spark-*):
#   benchmarks/scripts/gpu-cluster.sh [--gpus N] [--rows R] [--dim D] [--cores C] [--out DIR]
# Defaults: every GPU of the host, 1,000,000 x 768, 8 cores a worker, results in ${OUT:-/tmp}/gpu-cluster.
# `--device cpu --gpus 2` tries the script on a machine without GPUs (no utilization samples).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l || true)
rows=1000000 dim=768 cores=8 device=gpu out=${OUT:-/tmp}/gpu-cluster
while [ $# -gt 0 ]; do
  case "$1" in
    --gpus) gpus=$2 ;; --rows) rows=$2 ;; --dim) dim=$2 ;; --cores) cores=$2 ;; --out) out=$2 ;; --device) device=$2 ;;
    *) echo "gpu-cluster: unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
[ "${gpus:-0}" -ge 1 ] || { echo "gpu-cluster: no GPU (nvidia-smi -L lists none)" >&2; exit 1; }
[ -x .gpu/java ] && ls -d .gpu-spark-*/ >/dev/null 2>&1 \
  || { echo "gpu-cluster: no Spark bundle; run benchmarks/scripts/gpu-bundle.sh --spark and send its folders" >&2; exit 1; }
job_jar=$(ls .gpu/lib/embednorm-jobs-*-spark-submit.jar)
java_home=$root/.gpu-jre
mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/embednorm-gpu-cluster.XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  pkill -f "$work" 2>/dev/null || true
  # Keep the cluster's logs (master, workers, executors' stderr) beside the results.
  mkdir -p "$out/logs"
  cp "$work"/*.log "$out/logs/" 2>/dev/null || true
  for log in "$work"/round-*/worker-*/app-*/*/stderr; do
    [ -f "$log" ] && cp "$log" "$out/logs/$(echo "${log#"$work"/}" | tr / -)"
  done
  rm -rf "$work"
}
trap cleanup EXIT

# A SPARK_HOME of links to the bundle's jars (embednorm's own reach executors with the job jar);
# workers start executors from it with this Java.
spark_home=$work/spark-home
mkdir -p "$spark_home/jars" "$spark_home/conf"
for jar in .gpu/lib/*.jar .gpu-spark-*/*.jar; do
  case $(basename "$jar") in embednorm-*|junit-*) continue ;; esac
  ln -sf "$root/$jar" "$spark_home/jars/"
done
export SPARK_HOME=$spark_home JAVA_HOME=$java_home SPARK_LOCAL_DIRS=$work/local SPARK_SCALA_VERSION=2.13 \
  SPARK_CONF_DIR=$spark_home/conf SPARK_LOCAL_IP=127.0.0.1
mapfile -t jvm_options < <(grep -v '^#' conf/jvm.options | grep -v '^$')
executor_options="--add-modules=jdk.incubator.vector -XX:PerMethodTrapLimit=1000"

# Starts one JVM of the cluster in the background: name, main class, arguments...
launch() {
  local name=$1 main=$2; shift 2
  "$java_home/bin/java" -Xmx1g "${jvm_options[@]}" -Dspark.master.rest.enabled=false \
    "${properties[@]}" -cp "$spark_home/jars/*" "$main" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
}
# Waits until file $1 has a line matching $2; prints that line.
await() {
  for _ in $(seq 600); do
    if line=$(grep -m1 -E "$2" "$1" 2>/dev/null); then echo "$line"; return; fi
    sleep 0.2
  done
  echo "gpu-cluster: no '$2' in $1:" >&2; tail -30 "$1" >&2; exit 1
}

start_cluster() {
  local workers=$1 index
  properties=()
  launch "round-$workers-master" org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 0 --webui-port 0
  master=$(await "$work/round-$workers-master.log" 'Starting Spark master at' | grep -o 'spark://[^ ]*')
  for ((index = 0; index < workers; index++)); do
    printf '[{"id":{"componentName":"spark.worker","resourceName":"gpu"},"addresses":["%d"]}]\n' \
      "$index" >"$work/gpu-$index.json"
    properties=(-Dspark.worker.resource.gpu.amount=1 "-Dspark.worker.resourcesFile=$work/gpu-$index.json")
    mkdir -p "$work/round-$workers/worker-$index"
    launch "round-$workers-worker-$index" org.apache.spark.deploy.worker.Worker --host 127.0.0.1 \
      --port 0 --webui-port 0 --cores "$cores" --memory 48g \
      --work-dir "$work/round-$workers/worker-$index" "$master"
    properties=()
  done
  for ((index = 0; index < workers; index++)); do
    await "$work/round-$workers-worker-$index.log" 'Successfully registered with master' >/dev/null
  done
}
stop_cluster() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
# What both drivers ask of the cluster: one GPU and $cores task slots an executor.
cluster_settings=(
  spark.executor.resource.gpu.amount=1
  "spark.task.resource.gpu.amount=$(awk "BEGIN { print 1 / $cores }")"
  "spark.executor.cores=$cores" spark.executor.memory=40g
  "spark.executor.extraJavaOptions=$executor_options"
)
conf() { for setting in "$@"; do printf '%s\0%s\0' --conf "$setting"; done; }
mapfile -d '' -t cluster_conf < <(conf "${cluster_settings[@]}")
# Samples every GPU's utilization into $1 until stop_sampling.
start_sampling() {
  : >"$1"
  command -v nvidia-smi >/dev/null || { sampler=; return; }
  nvidia-smi --query-gpu=index,utilization.gpu --format=csv,noheader,nounits -lms 200 >"$1" &
  sampler=$!
}
stop_sampling() { [ -z "$sampler" ] || { kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null; } || true; }
# Mean utilization and busy share (samples above 0 %) per GPU, from a sample file.
busy() {
  awk -F', *' '{ n[$1]++; s[$1] += $2; if ($2 > 0) b[$1]++ }
    END { for (g in n) printf "gpu%s %.0f%% (busy %.0f%%) ", g, s[g] / n[g], 100 * b[g] / n[g] }' "$1"
}

echo "gpu-cluster: $gpus GPU(s), $rows x $dim, $cores cores a worker; work folder $work" >&2
input=$work/input.parquet
"$java_home/bin/java" -Xmx16g "${jvm_options[@]}" -cp "$(.gpu/cp)" io.embednorm.jobs.cli.EmbedNormCli \
  generate --rows "$rows" --dim "$dim" --output "$input" >"$out/generate.log" 2>&1

rounds=(1)
[ "$gpus" -gt 1 ] && rounds+=("$gpus")
summary=$out/summary.md
{
  echo "| workers (1 GPU each) | job s | job rows/s | SQL passthrough s | SQL rms_norm s | GPU utilization during the job | during SQL |"
  echo "|---|---|---|---|---|---|---|"
} >"$summary"
for workers in "${rounds[@]}"; do
  echo "gpu-cluster: round with $workers worker(s)" >&2
  start_cluster "$workers"
  start_sampling "$out/smi-job-$workers.csv"
  started=$(date +%s.%N)
  "$java_home/bin/java" -Xmx4g "${jvm_options[@]}" -cp "$spark_home/jars/*" \
    org.apache.spark.deploy.SparkSubmit --master "$master" --class io.embednorm.jobs.NormalizeEmbeddingsJob \
    "${cluster_conf[@]}" --conf spark.driver.host=127.0.0.1 --conf spark.driver.bindAddress=127.0.0.1 \
    --conf spark.ui.enabled=false --conf spark.sql.extensions=io.embednorm.spark.EmbedNormExtensions \
    --conf "spark.embednorm.device=$device" "$job_jar" --input "$input" --output "$work/output-$workers" \
    --op rms_norm >"$out/job-$workers.log" 2>&1
  ended=$(date +%s.%N)
  stop_sampling
  job_seconds=$(awk "BEGIN { printf \"%.1f\", $ended - $started }")
  start_sampling "$out/smi-sql-$workers.csv"
  "$java_home/bin/java" -Xmx8g "${jvm_options[@]}" -cp "$(.gpu/cp)" io.embednorm.benchmarks.SparkQueryBenchmark \
    --master "$master" --rows "$rows" --dim "$dim" --data "$input" --device "$device" \
    --queries passthrough,rms_norm --cache --warmups 1 --repeats 3 "${cluster_conf[@]}" \
    --conf "spark.jars=$root/$job_jar" >"$out/sql-$workers.log" 2>&1
  stop_sampling
  passthrough=$(awk '$1 == "passthrough" { print $2 }' "$out/sql-$workers.log")
  normalize=$(awk '$1 == "rms_norm" { print $2 }' "$out/sql-$workers.log")
  grep -h 'normalizes on' "$work/round-$workers"/worker-*/app-*/*/stderr | sed 's/.*embednorm: //' >"$out/placements-$workers.txt" || true
  printf '| %d | %s | %.0f | %s | %s | %s | %s |\n' "$workers" "$job_seconds" \
    "$(awk "BEGIN { print $rows / $job_seconds }")" "$passthrough" "$normalize" \
    "$(busy "$out/smi-job-$workers.csv")" "$(busy "$out/smi-sql-$workers.csv")" >>"$summary"
  stop_cluster
done

python3 - "$work" "${rounds[@]}" >>"$summary" <<'EOF'
import sys
import numpy as np
import pyarrow.dataset as ds
work, rounds = sys.argv[1], sys.argv[2:]
def rows(folder):
    table = ds.dataset(f"{work}/output-{folder}", format="parquet").to_table().sort_by("id")
    values = table.column("embedding").combine_chunks()
    return table.column("id").to_numpy(), values.offsets.to_numpy(), values.values.to_numpy().view(np.uint32)
first = rows(rounds[0])
for other in rounds[1:]:
    same = all(np.array_equal(a, b) for a, b in zip(first, rows(other)))
    print(f"\noutput of {other} workers {'equals' if same else 'DIFFERS FROM'} the output of {rounds[0]} (bit for bit, {len(first[0])} rows)")
EOF
cat "$out"/placements-*.txt >&2 || true
cat "$summary"
