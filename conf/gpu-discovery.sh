#!/usr/bin/env bash
# Spark GPU resource discovery: prints the GPUs of this host as Spark expects,
#   {"name":"gpu","addresses":["0","1"]}
# Addresses are CUDA device ordinals, which embednorm's columnar operator uses as they are.
# Use with spark.executor.resource.gpu.discoveryScript=conf/gpu-discovery.sh (docs/CONFIGURATION.md).
set -euo pipefail
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo '{"name":"gpu","addresses":[]}'
  exit 0
fi
addresses=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | tr -d ' ' \
  | awk 'NF { printf "%s\"%s\"", (n++ ? "," : ""), $1 }')
echo "{\"name\":\"gpu\",\"addresses\":[${addresses}]}"
