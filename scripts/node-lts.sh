# Source this file (bash): it makes `node` on PATH a Node.js >= 22 (an LTS line the project
# supports: 22 or 24), for the rest of the calling script.
#   . scripts/node-lts.sh
# A machine whose node is 22 or newer keeps it. On an older one (Node 20 is past its end of life)
# it installs the official Node.js 22 build that the npm registry publishes as the package
# node-linux-<arch> (the same binary as the nodejs.org tarball), pinned by version and by the
# sha512 integrity below, into ${DUB_NODE_DIR:-${XDG_CACHE_HOME:-~/.cache}/dub/node-<version>-<arch>},
# once; later runs reuse it. The machine's npm then runs on that node. Set DUB_NODE_LTS=0 to skip.
# Fails (return 1) with a message when no Node >= 22 can be had, e.g. on an architecture without a pin.

dub_node_lts() {
  local want_major=22 version=22.23.3 arch pkg integrity dir have
  have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  if [ "${DUB_NODE_LTS:-1}" = 0 ] || [ "$have" -ge "$want_major" ]; then return 0; fi
  case "$(uname -m)" in
    x86_64) arch=x64; integrity='sha512-qHnz5tFsHoj/WM+uRENVjWONi5hVvmwrgq8A4V76KpuVNAc4+jwK8x4gwbobE9BtHNg/AKR2583eYorLF/c7ng==' ;;
    aarch64|arm64) arch=arm64; integrity='sha512-l3DAHZreylo+p9QXDtsOrjG2JXJqVzYXnAGmIQNOUNARcMppTO2cmewVQP+36tjJnSE+dzpMNtgW+c3oiDvXtA==' ;;
    *) echo "node-lts: Node.js $have is older than $want_major and no pinned build exists for $(uname -m): install Node.js 22 or 24" >&2; return 1 ;;
  esac
  pkg="node-linux-$arch"
  dir="${DUB_NODE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/dub/node-$version-$arch}"
  if [ ! -x "$dir/bin/node" ]; then
    echo "node-lts: Node.js $have is older than $want_major; installing Node.js $version ($pkg from the npm registry) into $dir" >&2
    local tmp
    tmp=$(mktemp -d) || return 1
    if ! (cd "$tmp" && npm pack "$pkg@$version" --silent >/dev/null 2>pack.log); then
      echo "node-lts: npm pack $pkg@$version failed: $(tail -3 "$tmp/pack.log")" >&2; rm -rf "$tmp"; return 1
    fi
    local got
    got=$(node -e 'const c=require("crypto");process.stdout.write("sha512-"+c.createHash("sha512").update(require("fs").readFileSync(process.argv[1])).digest("base64"))' "$tmp/$pkg-$version.tgz")
    if [ "$got" != "$integrity" ]; then
      echo "node-lts: $pkg-$version.tgz has integrity $got, expected $integrity: not installed" >&2; rm -rf "$tmp"; return 1
    fi
    mkdir -p "$dir.part" && tar xzf "$tmp/$pkg-$version.tgz" -C "$dir.part" --strip-components=1 \
      && rm -rf "$dir" && mv "$dir.part" "$dir"
    rm -rf "$tmp"
    [ -x "$dir/bin/node" ] || { echo "node-lts: $dir/bin/node missing after unpacking" >&2; return 1; }
  fi
  export PATH="$dir/bin:$PATH"
  hash -r
  echo "node-lts: using Node.js $(node --version) from $dir" >&2
}
dub_node_lts
