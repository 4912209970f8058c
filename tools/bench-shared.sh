#!/usr/bin/env bash
# One-game commands on a shared store (PostgreSQL) at size, against the same log in one
# SQLite file, measured in the same run: GAMES simulated games (about 125 events each),
# exported and imported into a PostgreSQL started in a temporary folder; then each
# command's whole-process time, median of 5, on both. Every command reads the store as it
# is (nothing copied): first with an empty cache, where the time and what the reader wrote
# to disk are printed (targets: under 100 ms, under 10 MB). Last, `verify --workers 1` and
# `2` against a plain `verify` of the whole store.
#
#   tools/bench-shared.sh [GAMES=8000]      (about 1,000,000 events; GAMELOG_BIN: another gamelog)
set -euo pipefail
games=${1:-8000}
root=$(cd "$(dirname "$0")/.." && pwd)
gamelog=${GAMELOG_BIN:-}
if [ -z "$gamelog" ]; then
  swift build -c release --static-swift-stdlib --package-path "$root" --product gamelog >&2
  gamelog=$(swift build -c release --package-path "$root" --show-bin-path)/gamelog
fi
work=$(mktemp -d)
chmod 755 "$work"   # as root, the server runs as the postgres user in here
cd "$work"
export GAMELOG_KEYS=$work/keys GAMELOG_CACHE=$work/cache GAMELOG_PG_DIR=$work/postgres
export GAMELOG_PG_PORT=${GAMELOG_PG_PORT:-55452} GAMELOG_COLLECTOR_PORT=${GAMELOG_COLLECTOR_PORT:-8290} GAMELOG_BIN=$gamelog
store=postgres://gamelog@127.0.0.1:$GAMELOG_PG_PORT/gamelog
cleanup() {
  "$root/tools/shared-store.sh" delete >/dev/null 2>&1 || true
  cd / && rm -rf "$work"
}
trap cleanup EXIT
seconds() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$1" "$(date +%s.%N)"; }

"$root/tools/shared-store.sh" start >&2
# The simulated log is kept for the next run (the network is ideal, so the size is the
# other benchmarks' for the same number of games).
cached="${GAMELOG_BENCH_CACHE:-$root/.build/bench}/shared-$games.sqlite"
mkdir -p "$(dirname "$cached")"
if [ ! -f "$cached" ]; then
  echo "simulating $games games..." >&2
  "$gamelog" simulate --games "$games" --seed 5 --clock fixed --network ideal --db "$cached.part" > /dev/null
  mv "$cached.part" "$cached"
fi
cp "$cached" big.sqlite
events=$("$gamelog" info --json --db big.sqlite | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')
"$gamelog" export --db big.sqlite > big.jsonl 2> /dev/null
echo "importing $events events into the shared store..." >&2
started=$(date +%s.%N)
"$gamelog" import --db "$store" big.jsonl > /dev/null
import_time=$(seconds "$started")
# The import ran ANALYZE itself (it grew the store from nothing): without the new rows'
# statistics the first whole-store `verify` took 26-34 s, the same one a minute later 8 s.
game=$("$gamelog" games --db big.sqlite --per-page 1 --json | python3 -c "import json, sys; print(json.load(sys.stdin)[0]['id'])")
# The game summaries a page reads (collectors keep them as they store; after an import,
# `gamelog index` stores them once).
started=$(date +%s.%N)
"$gamelog" index --db "$store" > /dev/null
index_time=$(seconds "$started")
last_page=$("$gamelog" games --db "$store" --per-page 50 --json 2>&1 >/dev/null | sed -n 's/.*of \([0-9]*\);.*/\1/p')
last_page=$(( (${last_page:-50} + 49) / 50 ))
# A reader with an empty cache: its time and what it left on this machine's disk.
cold() {
  rm -rf "$GAMELOG_CACHE"
  local start
  start=$(date +%s.%N)
  "$gamelog" "$@" --db "$store" > /dev/null
  python3 -c "import sys; print(f'{(float(sys.argv[2]) - float(sys.argv[1])) * 1000:.0f} ms')" "$start" "$(date +%s.%N)"
}
cold_games=$(cold games --per-page 50)
cold_last=$(cold games --per-page 50 --page "$last_page")
cold_folded=$(cold games --per-page 50 --from-events)
cold_game=$(cold state "$game")
cold_verify=$(cold verify "$game")
cache_bytes=$(du -sb "$GAMELOG_CACHE" 2>/dev/null | cut -f1 || true)

median_ms() {
  local samples=()
  for _ in 1 2 3 4 5; do
    local start
    start=$(date +%s.%N)
    "$gamelog" "$@" > /dev/null
    samples+=("$(python3 -c "import sys; print((float(sys.argv[2]) - float(sys.argv[1])) * 1000)" "$start" "$(date +%s.%N)")")
  done
  printf '%s\n' "${samples[@]}" | sort -n | sed -n 3p
}

echo
echo "ONE GAME ON A SHARED STORE: $events events, median of 5 runs, whole process (ms)"
echo "import into PostgreSQL $import_time"
echo "game summaries stored by \`gamelog index\` in $index_time"
echo "a reader with an empty cache: a games page $cold_games (the last, page $last_page: $cold_last; folded from the events, --from-events: $cold_folded), one game $cold_game, verify of one game $cold_verify; they wrote ${cache_bytes:-0} bytes to this machine's disk"
printf '%-36s %10s %10s %7s\n' "command" "SQLite" "PostgreSQL" "ratio"
worst=0
for command in "state $game --at 10" "state $game --as B" "diff $game 3 9" "log --game $game" "verify $game" "games --per-page 10" "info"; do
  # shellcheck disable=SC2086
  local_ms=$(median_ms $command --db big.sqlite)
  # shellcheck disable=SC2086
  shared_ms=$(median_ms $command --db "$store")
  python3 - "$command" "$local_ms" "$shared_ms" <<'PY'
import sys
name, local, shared = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
name = name.split()[0] + " " + " ".join(w for w in name.split()[1:] if len(w) < 30)
print(f"{name:<36} {local:10.1f} {shared:10.1f} {shared / local:6.2f}x  {'under 50 ms' if shared < 50 else 'OVER 50 ms'}")
PY
done

echo
echo "VERIFY OF THE WHOLE STORE: $events events (s)"
timed() {
  local start
  start=$(date +%s.%N)
  "$gamelog" verify --db "$store" "$@" > /dev/null 2>&1 || true
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$start" "$(date +%s.%N)"
}
plain=$(timed)
one=$(timed --workers 1)
two=$(timed --workers 2)
python3 - "$plain" "$one" "$two" <<'PY'
import sys
plain, one, two = map(float, sys.argv[1:])
print(f"plain verify {plain:.1f}, --workers 1 {one:.1f}, --workers 2 {two:.1f}: 2 workers {one / two:.2f}x one (target 1.6x), {plain / two:.2f}x a plain verify (target above 1)")
PY
