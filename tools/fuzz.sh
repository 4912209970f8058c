#!/usr/bin/env bash
# Feeds 1,000,000 generated hostile inputs to each decoder (both games' URL decoders,
# the event payload decoder, full, compact and through one decoder that remembers values
# by their bytes, the event block decoder; 100,000 to the raw inflater, and 100,000
# hostile payloads through the fixed-code deflater, each read back by zlib; 500 changed
# block rows read through a log file). Exits non-zero on a crash, an input that takes
# over a second, two readers that must agree and do not, or a deflated payload that does
# not read back.
# Usage: tools/fuzz.sh [INPUTS] [SEED]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --package-path tools/Benchmarks --product gamelog-fuzz >/dev/null
time tools/Benchmarks/.build/release/gamelog-fuzz "${1:-1000000}" "${2:-1}"
