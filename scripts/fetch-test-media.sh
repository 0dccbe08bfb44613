#!/usr/bin/env bash
# Fetch the real recordings the tests and benchmarks read, check each against its pinned sha256,
# and put them where the tests look: $DUB_TEST_MEDIA, default ../shared/media beside the clone.
# They are not part of the repository (their licences differ; see the table below), and a test
# whose recording is absent is reported as skipped with the reason.
#
#   bash scripts/fetch-test-media.sh                 # from the original public sources
#   DUB_TEST_MEDIA_MIRROR=https://files.example.org/dub-media bash scripts/fetch-test-media.sh
#                                                    # from a mirror that serves the files by name
#   bash scripts/fetch-test-media.sh --list          # what would be fetched, from where
# DUB_TEST_MEDIA_ORIGINS=0 uses the mirror alone (no request to the original sources).
#
# A download whose sha256 differs is removed and reported; it is never put where the tests look.
# Exit status: 0 when every file is in place and verified, 1 otherwise (the summary says which).
set -uo pipefail
cd "$(dirname "$0")/.."
DEST=${DUB_TEST_MEDIA:-../shared/media}
MIRROR=${DUB_TEST_MEDIA_MIRROR:-}
ORIGINS=${DUB_TEST_MEDIA_ORIGINS:-1}
LIST=0
[ "${1:-}" = "--list" ] && LIST=1

# name | sha256 | original source URL(s), space-separated; the first whose sha256 matches is kept.
# "-" as the source: derived here from other material (cut, concatenated or re-encoded), so only a
# mirror can provide it byte for byte.
GH=https://raw.githubusercontent.com
FILES=(
  "jfk.wav|59dfb9a4acb36fe2a2affc14bacbee2920ff435cb13cc314a08c13f66ba7860e|$GH/ggerganov/whisper.cpp/f0d2bfb/samples/jfk.wav"
  "two-speakers-call.wav|c319b4abca767b124e41432d364fd7df006cb26bb79d09326c487d606a134e6e|$GH/pyannote/pyannote-audio/develop/src/pyannote/audio/sample/sample.wav"
  "two-speakers-call.rttm|d78fe62c69d8e6dcbb42c26adfce83faccb374c5a1e6d987fe37f85f1c173c87|$GH/pyannote/pyannote-audio/develop/src/pyannote/audio/sample/sample.rttm"
  "two-speakers-call.stm|f861f3004927e1c4429199f9695bfd252def75d7d5e4bdf735d3d85fd4a667f7|-"
  "voice-ref-a.mp3|6e8a024342499eee94e81cd4c5b18c541c04263dc1865fc3f9a134fe3b135e00|$GH/myshell-ai/OpenVoice/74a1d14/resources/demo_speaker0.mp3 $GH/myshell-ai/OpenVoice/74a1d14/resources/demo_speaker1.mp3 $GH/myshell-ai/OpenVoice/74a1d14/resources/demo_speaker2.mp3 $GH/myshell-ai/OpenVoice/74a1d14/resources/example_reference.mp3"
  "voice-ref-b.mp3|8190e911f82c4b06fde63c55a5599b40ba652950eed704cf2cb54d477cf33978|$GH/myshell-ai/OpenVoice/74a1d14/resources/demo_speaker0.mp3 $GH/myshell-ai/OpenVoice/74a1d14/resources/demo_speaker1.mp3 $GH/myshell-ai/OpenVoice/74a1d14/resources/demo_speaker2.mp3 $GH/myshell-ai/OpenVoice/74a1d14/resources/example_reference.mp3"
  "chinese-news.wav|7b0f4d313a1ca671bc4831d60bcf0c12225efbffe6c0e93e54fbfe9bcd4021cb|$GH/OpenTalker/SadTalker/cd4c046/examples/driven_audio/chinese_news.wav"
  "japanese.wav|3db5426d0b158799e2be4f609b11f75bfbd4affffe18e9a1c8e6f241fcdedcfc|$GH/OpenTalker/SadTalker/cd4c046/examples/driven_audio/japanese.wav"
  "talking-head-480.mp4|00e3ea79bbf28cbdc4fbb67ec655d9a0fe876e880ec45af55ae481348d0c0fff|-"
  "talking-head-vertical.mp4|a6e4a80cc0eb856db5b4a46368fa0d7d9410b6a9276a8eefaa36a3da1c1b080a|-"
  "spanish-prompt.wav|1c7c6f73d5c7e1ad8b9cd1ebaee24a755680fecb8577cb3a6b98ef4669b0d683|-"
  "music-coffee.wav|43540271262ebb37f5a760dea62686cc30dc379d85757a83f79b8bc0dce8bedb|-"
)

fetch() { # url out
  if command -v curl >/dev/null 2>&1; then curl -fsSL --retry 2 -o "$2" "$1"; else wget -q -O "$2" "$1"; fi
}

mkdir -p "$DEST" || { echo "cannot create $DEST" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok=0; failed=(); unavailable=()
for row in "${FILES[@]}"; do
  IFS='|' read -r name sha sources <<<"$row"
  target="$DEST/$name"
  urls=()
  [ -n "$MIRROR" ] && urls+=("${MIRROR%/}/$name")
  [ "$sources" != "-" ] && [ "$ORIGINS" != 0 ] && read -r -a more <<<"$sources" && urls+=("${more[@]}")
  if [ $LIST = 1 ]; then echo "$name  sha256 $sha  ${urls[*]:-(derived: only from a mirror, DUB_TEST_MEDIA_MIRROR)}"; continue; fi
  if [ -f "$target" ] && [ "$(sha256sum "$target" | cut -d' ' -f1)" = "$sha" ]; then
    echo "$name: present, verified"; ok=$((ok + 1)); continue
  fi
  if [ ${#urls[@]} -eq 0 ]; then
    echo "$name: derived from other material, set DUB_TEST_MEDIA_MIRROR to a copy (tests that need it stay skipped)"
    unavailable+=("$name"); continue
  fi
  placed=0
  for url in "${urls[@]}"; do
    part="$tmp/$name.part"
    rm -f "$part"
    if ! fetch "$url" "$part"; then echo "$name: $url: download failed"; continue; fi
    got=$(sha256sum "$part" | cut -d' ' -f1)
    if [ "$got" != "$sha" ]; then echo "$name: $url: sha256 $got, expected $sha: discarded"; continue; fi
    mv -f "$part" "$target" && placed=1 && echo "$name: fetched from $url, verified" && break
  done
  if [ $placed = 1 ]; then ok=$((ok + 1)); else failed+=("$name"); fi
done
[ $LIST = 1 ] && exit 0
echo "$ok in place in $DEST; ${#failed[@]} failed${failed:+: ${failed[*]}}; ${#unavailable[@]} need a mirror${unavailable:+: ${unavailable[*]}}"
[ ${#failed[@]} -eq 0 ] && [ ${#unavailable[@]} -eq 0 ]
