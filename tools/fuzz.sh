#!/usr/bin/env bash
# Feeds 1,000,000 generated hostile inputs to each decoder (both games' URL decoders,
# the event payload decoder, the event block decoder; 100,000 to the raw inflater; 500
# changed block rows read through a log file). Exits non-zero on a crash
# or an input that takes over a second. Usage: tools/fuzz.sh [INPUTS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --package-path tools/Benchmarks --product gamelog-fuzz >/dev/null
time tools/Benchmarks/.build/release/gamelog-fuzz "${1:-1000000}" "${2:-1}"
