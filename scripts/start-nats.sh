#!/usr/bin/env bash
# Start a local NATS server with JetStream for development (Debian package nats-server).
#   bash scripts/start-nats.sh [port] [store-dir]
set -euo pipefail
port="${1:-4222}"
store="${2:-${TMPDIR:-/tmp}/dub-nats}"
command -v nats-server >/dev/null || { echo "nats-server not found: apt-get install -y nats-server" >&2; exit 1; }
mkdir -p "$store"
exec nats-server -js -a 127.0.0.1 -p "$port" -sd "$store"
