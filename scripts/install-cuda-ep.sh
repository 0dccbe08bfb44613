#!/usr/bin/env bash
# Operator step for GPU hosts: install onnxruntime-node's CUDA execution provider libraries.
#
# `npm ci` skips them (they are downloaded from outside the npm registry, which CI and offline
# hosts cannot reach). On a GPU host with internet access and the NVIDIA driver + CUDA 12 runtime
# and cuDNN 9 installed, run this once from the repo root:
#
#     bash scripts/install-cuda-ep.sh
#
# then start the worker with `--device cuda` (or DUB_DEVICE=cuda). Each model falls back to the
# CPU provider, with a warning in the log, when the CUDA provider cannot be loaded.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(node -p "require('path').dirname(require.resolve('onnxruntime-node/package.json'))")
flavour="${1:-cuda12}"
echo "installing the CUDA execution provider ($flavour) into $dir"
(cd "$dir" && ONNXRUNTIME_NODE_INSTALL="$flavour" node ./script/install)
lib="$dir/bin/napi-v6/linux/x64"
ls -la "$lib" | grep -E 'providers_(cuda|shared)' || { echo "CUDA provider libraries not found in $lib" >&2; exit 1; }
node -e "
const ort = require('onnxruntime-node');
console.log('backends:', ort.listSupportedBackends().map((b) => b.name).join(', '));
"
echo "done: start the worker with --device cuda"
