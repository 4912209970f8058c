#!/usr/bin/env bash
# Event store benchmark: bytes per event, append and read rates, each next to a
# baseline measured in the same run. Usage: tools/bench-store.sh [GAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --package-path tools/Benchmarks --product gamelog-bench >/dev/null
tools/Benchmarks/.build/release/gamelog-bench store --games "${1:-300}"
