#!/usr/bin/env bash
# Spark GPU resource discovery: prints the GPUs of this host as Spark expects,
#   {"name":"gpu","addresses":["0","1"]}
# Addresses are CUDA device ordinals, which embednorm's columnar operator uses as they are.
# Use with spark.executor.resource.gpu.discoveryScript=conf/gpu-discovery.sh (README "On a
# cluster", docs/CONFIGURATION.md). Without nvidia-smi, or where it fails (no driver loaded), it
# prints no addresses: Spark then says that the executor lacks the GPUs it asked for.
set -uo pipefail
empty='{"name":"gpu","addresses":[]}'
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "$empty"
  exit 0
fi
if ! indexes=$(nvidia-smi --query-gpu=index --format=csv,noheader); then
  echo "gpu-discovery.sh: nvidia-smi failed; reporting no GPUs" >&2
  echo "$empty"
  exit 0
fi
addresses=$(printf '%s\n' "$indexes" | tr -d ' \r' \
  | awk 'NF { printf "%s\"%s\"", (n++ ? "," : ""), $1 }')
echo "{\"name\":\"gpu\",\"addresses\":[${addresses}]}"
