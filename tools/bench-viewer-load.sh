#!/usr/bin/env bash
# The web viewer under many clients at once, on a big log: simulates GAMES games (default
# 8,000: about 1,000,000 events), starts `gamelog serve` (release build) and runs
# tools/viewer_load.py twice: at once, while the server still reads the game list and
# audits in the background, and again once both are done. Prints each run's percentiles
# and the server's CPU a request (tools/viewer_route_cost.py breaks that down by route).
# Also: the last page of games asked first thing on the fresh server, and 50 clients on
# one long game (the longest the first pages list) once the passes are done.
#
#   tools/bench-viewer-load.sh [GAMES=8000] [CLIENTS=50] [SECONDS=20]
#
# The clients run on the same machine as the server (on a 2-core machine they took a
# sixth of a core in session 32, the server the rest), so the figures are an upper bound
# of what a browser sees.
set -euo pipefail
games=${1:-8000}
clients=${2:-50}
seconds=${3:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
gamelog=${GAMELOG_BIN:-}
if [ -z "$gamelog" ]; then
  swift build -c release --static-swift-stdlib --package-path "$root" --product gamelog >&2
  gamelog=$(swift build -c release --package-path "$root" --show-bin-path)/gamelog
fi
work=$(mktemp -d)
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
cd "$work"
export GAMELOG_KEYS=$work/keys
# A cache of its own: the viewer keeps its audit beside the user's cache, and a run that
# found the previous run's would measure a warm server, not a fresh one.
export GAMELOG_CACHE=$work/cache
cache=${GAMELOG_BENCH_CACHE:-$root/.build/bench}
mkdir -p "$cache"
log="$cache/viewer-$games.sqlite"
if [ ! -f "$log" ]; then
  echo "simulating $games games (kept as $log)..." >&2
  "$gamelog" simulate --games "$games" --seed 1 --clock fixed --db "$log.part" > /dev/null
  mv "$log.part" "$log"
fi
events=$("$gamelog" info --json --db "$log" | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
before=$(sha256sum < "$log")

started=$(date +%s.%N)
"$gamelog" serve --db "$log" --port 0 > serve.out 2>&1 &
server=$!
for _ in $(seq 1 600); do grep -q "http://" serve.out 2>/dev/null && break; sleep 0.05; done
base=$(grep -o 'http://[^/ ]*' serve.out | head -n 1)
[ -n "$base" ] || { echo "error: gamelog serve did not start: $(cat serve.out)" >&2; exit 1; }
ready=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$started" "$(date +%s.%N)")
echo "log: $events events in $games games; the server answered after $ready s"

# The last page of games, first thing on a cold server: from the catalog, whatever the
# background passes have reached.
listed=$(curl -s "$base/games" | grep -o '[0-9,]* games' | head -n 1 | tr -d ', games')
last_page=$(( (${listed:-1} + 49) / 50 ))
cold_last=$(curl -s -o /dev/null -w '%{http_code} %{time_total}' "$base/games?page=$last_page")
echo "cold server: /games?page=$last_page (the last of $listed games) answered ${cold_last%% *} in $(python3 -c "import sys; print(f'{1000 * float(sys.argv[1]):.0f}')" "${cold_last##* }") ms"

# The server's CPU (user + system, from /proc) over a run, per request: wall times on a
# machine the clients share move with the machine; this moves with the server's work.
server_cpu() { awk '{ print $14 + $15 }' "/proc/$server/stat"; }
ticks=$(getconf CLK_TCK)
measured() {
  local before after out
  before=$(server_cpu)
  out=$(python3 "$root/tools/viewer_load.py" "$base" "$@")
  after=$(server_cpu)
  echo "$out"
  python3 -c "import re, sys; n = int(re.search(r': (\d+) requests,', sys.argv[1]).group(1)); cpu = (int(sys.argv[3]) - int(sys.argv[2])) / int(sys.argv[4]); print(f'server CPU: {cpu:.1f} s, {1000 * cpu / max(n, 1):.2f} ms a request')" "$out" "$before" "$after" "$ticks"
}

measured --clients "$clients" --seconds "$seconds" --label "fresh server, background passes running: "

# Both background passes done: the list's header says so.
waited=0
until curl -s "$base/games" | grep -q "the whole log's chain, signatures and catalog:" \
      && ! curl -s "$base/games" | grep -q "checking games:"; do
  sleep 1; waited=$((waited + 1))
  [ "$waited" -lt 1800 ] || { echo "error: the background audit did not finish in 30 minutes" >&2; exit 1; }
done
done_at=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.0f}')" "$started" "$(date +%s.%N)")
echo "background list and audit done $done_at s after the start"
measured --clients "$clients" --seconds "$seconds" --seed 2 --label "after the background passes: "
measured --clients "$clients" --seconds "$seconds" --seed 3 --think 500 --label "people reading (half a second between clicks): "
long=$(python3 - "$base" <<'PY'
import json, sys, urllib.request
games = []
for page in range(1, 6):
    batch = json.load(urllib.request.urlopen(f"{sys.argv[1]}/api/games?page={page}&per_page=1000"))
    games += batch
    if len(batch) < 1000:
        break
longest = max(games, key=lambda game: game["events"])
print(longest["id"], longest["events"])
PY
)
measured --clients "$clients" --seconds "$seconds" --seed 4 --game "${long%% *}" --label "one long game (${long##* } events): "
[ "$(sha256sum < "$log")" = "$before" ] && echo "the log is byte-identical afterwards"
