#!/usr/bin/env bash
# Replay benchmark: builds (or reuses) a log of simulated games, then measures raw
# reads, full replay of all projections, game opening and random jumps.
# Usage: tools/bench-replay.sh [GAMES] [DATABASE]   (10,000 games is about 1M events)
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-10000}
db=${2:-.build/bench-replay-$games.sqlite}
swift build -c release --static-swift-stdlib --product gamelog >/dev/null
swift build -c release --package-path tools/Benchmarks --product gamelog-bench >/dev/null
if [ ! -f "$db" ]; then
  .build/release/gamelog simulate --games "$games" --seed 1 --clock fixed --db "$db"
fi
tools/Benchmarks/.build/release/gamelog-bench replay "$db" --samples 200
