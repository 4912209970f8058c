#!/usr/bin/env bash
# The web viewer's latency on a big log: starts `gamelog serve` (release build) on a
# simulated log (default 10,000 games, about 1.3M events) and times, with curl, the
# games page, a first step page of a game (its conversation read), then step pages and
# API steps of that game, as the server answers them. Prints medians and the worst.
# Usage: tools/bench-serve.sh [GAMES]
set -euo pipefail
cd "$(dirname "$0")/.."
games=${1:-10000}
swift build -c release --static-swift-stdlib --product gamelog >/dev/null
binary=$(pwd)/.build/release/gamelog
work=$(mktemp -d)
server=""
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
"$binary" simulate --games "$games" --seed 1 --clock fixed > /dev/null
events=$("$binary" info --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
started=$(date +%s.%N)
"$binary" serve --port 0 > serve.out 2>&1 &
server=$!
for _ in $(seq 1 600); do grep -q "http://" serve.out 2>/dev/null && break; sleep 0.1; done
base=$(grep -o 'http://[^/]*' serve.out | head -n 1)
echo "log: $events events; server ready after $(echo "$(date +%s.%N) - $started" | bc) s"
time_of() { curl -s -o /dev/null -w '%{time_total}' "$1"; }
echo "games page (first, folds the log once): $(time_of "$base/games") s"
echo "games page (again): $(time_of "$base/games?page=3") s"
game=$(curl -s "$base/api/games" | python3 -c 'import json,sys; g=json.load(sys.stdin); print(g[len(g)//2]["id"])')
echo "game page, first open (reads its conversation, audits it): $(time_of "$base/games/$game") s"
for kind in "games/$game?step=%d&as=auditor" "games/$game?step=%d&as=B" "api/games/$game/steps/%d?as=A"; do
  samples=()
  for step in $(seq 1 3 90); do samples+=("$(time_of "$base/$(printf "$kind" "$step")")"); done
  printf '%s\n' "${samples[@]}" | sort -n | awk -v name="${kind%%\?*}" '{a[NR]=$1} END {printf "%-40s median %.1f ms, worst %.1f ms (%d requests)\n", name " " , a[int((NR+1)/2)]*1000, a[NR]*1000, NR}'
done
