#!/usr/bin/env bash
# The benchmark table: on one workload of simulated games (4,000 games, about
# 1,000,000 events), gamelog's append, bytes per event, replay, seek and replay
# memory, next to the limit (raw SQLite through the C API) and the peer (Python
# eventsourcing 9.5.6), all measured in the same run; then the payload layouts on the
# same events (gamelog-bench payloads) and the one-game commands on a small log and one
# of GAMES games (tools/ratio.sh).
# Usage: tools/bench.sh [GAMES] [SMALL-EVENTS]     (about 10 minutes at the default; rates are medians of 3 runs)
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-4000}
small=${2:-100000}
folder=.build/bench
mkdir -p "$folder"

python3 -c 'import importlib.metadata as m, sys; sys.exit(m.version("eventsourcing") != "9.5.6")' 2>/dev/null \
  || python3 -m pip install --quiet 'eventsourcing==9.5.6'

echo "… building (release)" >&2
swift build -c release --static-swift-stdlib --product gamelog >/dev/null
swift build -c release --package-path tools/Benchmarks --product gamelog-bench >/dev/null

workload="$folder/workload-$games.sqlite"
if [ ! -f "$workload" ]; then
  echo "… simulating $games games into $workload" >&2
  .build/release/gamelog simulate --games "$games" --seed 1 --clock fixed --db "$workload.partial" >/dev/null
  mv "$workload.partial" "$workload"
fi
if [ ! -f "$workload.jsonl" ]; then
  .build/release/gamelog export --db "$workload" > "$workload.jsonl.partial"
  mv "$workload.jsonl.partial" "$workload.jsonl"
fi
tools/Benchmarks/.build/release/gamelog-bench table "$workload" "$workload.jsonl" "$folder/run" --small "$small"
echo
echo "PAYLOAD LAYOUTS on the same events"
tools/Benchmarks/.build/release/gamelog-bench payloads "$workload"
echo
echo "COMMANDS ABOUT ONE GAME, a small log against one of $games games"
tools/ratio.sh 16 "$games" 5
