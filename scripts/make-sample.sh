#!/usr/bin/env bash
# Make a sample source video the project can produce itself: English speech from espeak-ng over a
# quiet music-like bed, with a test-pattern picture. Usage: bash scripts/make-sample.sh [out.mp4]
set -euo pipefail
out="${1:-sample.mp4}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
espeak-ng -v en-us -s 150 -w "$tmp/a.wav" "Good morning everyone. Today we are going to talk about the weather in the mountains."
espeak-ng -v en-us+f3 -s 150 -w "$tmp/b.wav" "The forecast says it will be sunny and warm for the whole week."
ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "anullsrc=r=22050:cl=mono:d=0.8" -i "$tmp/a.wav" -f lavfi -i "anullsrc=r=22050:cl=mono:d=0.7" -i "$tmp/b.wav" -f lavfi -i "anullsrc=r=22050:cl=mono:d=1.0" \
  -filter_complex "[0][1][2][3][4]concat=n=5:v=0:a=1[speech]" -map "[speech]" "$tmp/speech.wav"
dur=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$tmp/speech.wav")
ffmpeg -hide_banner -loglevel error -y \
  -f lavfi -i "testsrc2=size=640x360:rate=25:duration=$dur" \
  -i "$tmp/speech.wav" \
  -f lavfi -i "sine=frequency=220:sample_rate=44100:duration=$dur" -f lavfi -i "sine=frequency=330:sample_rate=44100:duration=$dur" \
  -filter_complex "[2][3]amix=inputs=2,volume=0.06[bed];[1]aresample=44100[sp];[sp][bed]amix=inputs=2:normalize=0,aformat=channel_layouts=stereo[a]" \
  -map 0:v -map "[a]" -c:v libx264 -pix_fmt yuv420p -preset veryfast -c:a aac -b:a 128k -shortest "$out"
echo "$out"
