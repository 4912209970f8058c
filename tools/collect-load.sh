#!/usr/bin/env bash
# Load and faults through the collector, measured: PHONES simulated phones (pairs that
# played GAMES games each, every phone a log of its own) push at once into two collectors
# on one PostgreSQL; one collector is killed (SIGKILL) and PostgreSQL is restarted
# (immediate stop, a crash to its data) while they push, and each phone pushes again
# until it is through, as a phone would. Afterwards: every phone's head equals the
# store's, `verify --trust` (the keys read from the phones) is clean, and the store holds
# every phone's events exactly once. Then ingest figures (events/s) through the collector
# without faults (the phones' uploads made beforehand and sent by a light client), against
# `gamelog import` of the same logs into SQLite and against a plain COPY of the same rows
# into PostgreSQL (the limit); the same uploads through two collectors on one store; 16
# `gamelog push` at once at the default batch, each of
# which must get through on its first try; and `verify --workers 1, 2, 4`.
#
#   tools/collect-load.sh [PHONES=200] [GAMES=4]
#   (GAMELOG_BIN, GAMELOG_BENCH: a gamelog and a gamelog-bench to use instead of building them;
#   COLLECT_FLAGS: flags for the measured collector, e.g. --no-summaries)
set -euo pipefail
phones=${1:-200}
games=${2:-4}
root=$(cd "$(dirname "$0")/.." && pwd)
tools=$root/tools
# GAMELOG_BIN: a gamelog to measure instead of this checkout's release build.
gamelog=${GAMELOG_BIN:-}
if [ -z "$gamelog" ]; then
  swift build -c release --static-swift-stdlib --package-path "$root" --product gamelog >&2
  gamelog=$(swift build -c release --package-path "$root" --show-bin-path)/gamelog
fi
# GAMELOG_BENCH: a gamelog-bench to make the uploads with, instead of building one.
bench=${GAMELOG_BENCH:-}
if [ -z "$bench" ]; then
  swift build -c release --package-path "$root/tools/Benchmarks" --product gamelog-bench >&2
  bench=$(swift build -c release --package-path "$root/tools/Benchmarks" --show-bin-path)/gamelog-bench
fi
work=$(mktemp -d)
chmod 755 "$work"   # as root, the server runs as the postgres user in here
cd "$work"
export GAMELOG_KEYS=$work/keys GAMELOG_CACHE=$work/cache GAMELOG_PG_DIR=$work/postgres
export GAMELOG_PG_PORT=${GAMELOG_PG_PORT:-55442} GAMELOG_COLLECTOR_PORT=${GAMELOG_COLLECTOR_PORT:-8190} GAMELOG_BIN=$gamelog
second=$((GAMELOG_COLLECTOR_PORT + 1))
store=postgres://gamelog@127.0.0.1:$GAMELOG_PG_PORT/gamelog
b_pid=
pair_pids=()
cleanup() {
  [ -n "$b_pid" ] && kill "$b_pid" 2>/dev/null || true
  [ "${#pair_pids[@]}" -gt 0 ] && kill "${pair_pids[@]}" 2>/dev/null || true
  "$tools/shared-store.sh" delete >/dev/null 2>&1 || true
  cd / && rm -rf "$work"
}
trap cleanup EXIT
now() { date +%s.%N; }
rate() { python3 -c "import sys; e, s = float(sys.argv[1]), float(sys.argv[2]); print(f'{e / s:,.0f} events/s ({s:.1f} s)')" "$1" "$2"; }
pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
psql_store() { pg "$pgbin/psql" -h 127.0.0.1 -p "$GAMELOG_PG_PORT" -U gamelog -d "${2:-gamelog}" -Atqc "$1"; }

"$tools/shared-store.sh" start >&2
start_second() {
  # shellcheck disable=SC2086 # COLLECT_FLAGS: extra flags for the measured collector (say, --no-summaries)
  "$gamelog" collect --db "$store" --port "$second" ${COLLECT_FLAGS:-} > "collect-$second.log" 2>&1 < /dev/null &
  b_pid=$!
  until grep -q "gamelog collect: http" "collect-$second.log" 2>/dev/null; do
    if ! kill -0 "$b_pid" 2>/dev/null; then
      echo "error: the collector on port $second did not start:" >&2; cat "collect-$second.log" >&2; exit 1
    fi
    sleep 0.1
  done
}
start_second

echo "recording $phones phones ($((phones / 2)) pairs, $games games each)..." >&2
seq 1 $((phones / 2)) | xargs -P 4 -I{} "$gamelog" simulate --games "$games" --seed {} --per-device phones \
  --devices "P{}a,P{}b" > /dev/null
ls phones/*.sqlite | wc -l | grep -qx "$phones"
total=0
for phone in phones/*.sqlite; do
  total=$((total + $("$gamelog" info --json --db "$phone" | python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])')))
done
echo "$total events on the phones" >&2
for phone in phones/*.sqlite; do
  name=$(basename "$phone" .sqlite)
  "$gamelog" keys enroll --to "http://127.0.0.1:$GAMELOG_COLLECTOR_PORT" --device "$name" --public-key "keys/$name.key" > /dev/null
done

# Every phone at once, half to each collector, one game per request; a phone whose push
# fails pushes again later (it resumes where the collector stands), backing off as phones
# do: 0.5 s, then twice as long each time up to 20 s, with jitter. (Retrying every 0.5 s,
# 200 phones starting a process each time a collector was down starved the collectors.)
push_until_done() {
  local phone=$1 port=$2 attempt wait=0.5
  for attempt in $(seq 1 40); do
    if "$gamelog" push --db "$phone" --to "http://127.0.0.1:$port" --batch 1 > /dev/null 2>> push-errors.log; then
      echo "$attempt" >> attempts.log
      return 0
    fi
    sleep "$(python3 -c "import random, sys; print(float(sys.argv[1]) * random.uniform(0.5, 1.5))" "$wait")"
    wait=$(python3 -c "import sys; print(min(20.0, float(sys.argv[1]) * 2))" "$wait")
  done
  echo "error: $phone did not get through in 40 attempts" >&2
  return 1
}
started=$(now)
pids=()
i=0
for phone in phones/*.sqlite; do
  port=$GAMELOG_COLLECTOR_PORT; [ $((i % 2)) = 1 ] && port=$second
  push_until_done "$phone" "$port" &
  pids+=($!)
  i=$((i + 1))
done
sleep 2
echo "killing the collector on port $second (SIGKILL)..." >&2
kill -9 "$b_pid"; wait "$b_pid" 2>/dev/null || true
sleep 1
echo "crashing PostgreSQL (immediate stop), then starting it again..." >&2
pg "$pgbin/pg_ctl" -D "$GAMELOG_PG_DIR/data" -m immediate -w stop > /dev/null
sleep 1
pg "$pgbin/pg_ctl" -D "$GAMELOG_PG_DIR/data" -l "$GAMELOG_PG_DIR/data/server.log" -w \
  -o "-c listen_addresses=127.0.0.1 -p $GAMELOG_PG_PORT -c unix_socket_directories='$GAMELOG_PG_DIR/data'" start > /dev/null
start_second
failed=0
for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
elapsed=$(python3 -c "print($(now) - $started)")
retried=$(awk '$1 > 1' attempts.log | wc -l)
echo "pushes done: $failed phones failed, $retried pushed more than once ($(sort -u push-errors.log | wc -l) distinct errors)" >&2

# What the store holds against what the phones hold.
stored=$(psql_store "SELECT count(*) FROM events")
# Each event once (its id, its place in its recording), and positions without a gap.
distinct=$(psql_store "SELECT count(DISTINCT event_id) FROM events")
in_streams=$(psql_store "SELECT count(DISTINCT (stream_id, stream_version)) FROM events")
gapless=$(psql_store "SELECT count(*) = max(position) FROM events")
"$gamelog" heads --db "$store" --json > store-heads.json
mismatched=0
for phone in phones/*.sqlite; do
  "$gamelog" heads --db "$phone" --json > phone-heads.json
  python3 - phone-heads.json store-heads.json <<'PY' || mismatched=$((mismatched + 1))
import json, sys
phone = json.load(open(sys.argv[1])); store = {h["publicKey"]: h for h in json.load(open(sys.argv[2]))}
sys.exit(0 if phone and all(store.get(h["publicKey"], {}).get("root") == h["root"] and store[h["publicKey"]]["size"] == h["size"] for h in phone) else 1)
PY
done
python3 - phones/*.sqlite > trust.json <<'PY'
import json, sqlite3, sys
keys = []
for path in sys.argv[1:]:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    keys += [{"device": d, "publicKey": k.hex()} for d, k in db.execute("SELECT device, public_key FROM trees")]
print(json.dumps(keys))
PY
verify_status=0
"$gamelog" verify --db "$store" --trust trust.json > verify.out 2>&1 || verify_status=$?
echo "store: $stored events ($distinct distinct, positions gapless: $gapless) of $total on the phones; $mismatched phones whose head differs from the store's; verify --trust: $(tail -n 1 verify.out)" >&2
[ "$failed" = 0 ] && [ "$stored" = "$total" ] && [ "$distinct" = "$total" ] && [ "$in_streams" = "$total" ] && [ "$gapless" = t ] && [ "$mismatched" = 0 ] && [ "$verify_status" = 0 ] || {
  echo "error: the load run lost, doubled or failed something (see above)" >&2; exit 1; }

# Ingest without faults, into new databases through one collector. First the collector's
# own rate: every phone's upload made beforehand (as push sends it, default batch) and sent
# by a light client, 8 at a time, so the phones' work (on a studio's machine, done on the
# phones) does not share these two cores. Then 16 real `gamelog push` processes at once at
# the default batch: every one must get through on its first try.
fresh_collector() {
  psql_store "CREATE DATABASE $1" postgres
  kill "$b_pid" 2>/dev/null; wait "$b_pid" 2>/dev/null || true
  store=postgres://gamelog@127.0.0.1:$GAMELOG_PG_PORT/$1 start_second
  for phone in phones/*.sqlite; do
    name=$(basename "$phone" .sqlite)
    "$gamelog" keys enroll --to "http://127.0.0.1:$second" --device "$name" --public-key "keys/$name.key" > /dev/null
  done
}
"$bench" uploads phones uploads > /dev/null
fresh_collector clean
# The CPU the run took, the collector's and the whole machine's (user + system against
# idle, in clock ticks): on a machine PostgreSQL shares, the rate is what is left of the
# cores, so the ratio below reads with them.
machine_ticks() { awk '/^cpu / { print $2 + $3 + $4, $5 + $6 }' /proc/stat; }
process_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
read -r busy_before idle_before < <(machine_ticks)
collector_before=$(process_ticks "$b_pid")
"$tools/post-uploads.py" "http://127.0.0.1:$second" 8 uploads > posted.json
read -r busy_after idle_after < <(machine_ticks)
collector_after=$(process_ticks "$b_pid")
ticks=$(getconf CLK_TCK)
cpu_row=$(python3 -c "
import sys
busy, idle, collector, ticks, events = (float(x) for x in sys.argv[1:])
print(f'the collector {collector / ticks / events * 1e6:.0f} us an event ({collector / ticks:.1f} core-s); the machine busy {busy / ticks:.1f} core-s, idle {idle / ticks:.1f}')
" "$((busy_after - busy_before))" "$((idle_after - idle_before))" "$((collector_after - collector_before))" "$ticks" "$total")
python3 - posted.json "$total" <<'PY'
import json, sys
posted = json.load(open(sys.argv[1]))
if posted["accepted"] != posted["uploads"] or posted["events"] != int(sys.argv[2]):
    sys.exit(f"error: the collector did not store every prepared upload: {posted}")
PY
collector_time=$(python3 -c 'import json; print(json.load(open("posted.json"))["seconds"])')
collector_latency=$(python3 -c 'import json; p = json.load(open("posted.json")); print("p50 %.2f s, p95 %.2f s" % (p["p50"], p["p95"]))')
# The same uploads through two collectors on one new store, half to each, 4 at a time to
# each (a studio runs several behind a load balancer): their writes take turns on the
# store's lock, and neither may slow the other (session 46 found following writes had
# made this ten times slower).
psql_store "CREATE DATABASE pair" postgres
pair_store=postgres://gamelog@127.0.0.1:$GAMELOG_PG_PORT/pair
for port in $((second + 1)) $((second + 2)); do
  "$gamelog" collect --db "$pair_store" --port "$port" ${COLLECT_FLAGS:-} > "collect-$port.log" 2>&1 < /dev/null &
  pair_pids+=($!)
  until grep -q "gamelog collect: http" "collect-$port.log" 2>/dev/null; do
    kill -0 "${pair_pids[-1]}" 2>/dev/null || { echo "error: the collector on port $port did not start:" >&2; cat "collect-$port.log" >&2; exit 1; }
    sleep 0.1
  done
done
for phone in phones/*.sqlite; do
  name=$(basename "$phone" .sqlite)
  "$gamelog" keys enroll --to "http://127.0.0.1:$((second + 1))" --device "$name" --public-key "keys/$name.key" > /dev/null
done
mkdir halves halves/0 halves/1
half=0
for upload in uploads/*.upload; do
  stem=${upload%.upload}
  cp "$upload" "$stem.key" "halves/$half/"
  half=$((1 - half))
done
started=$(now)
"$tools/post-uploads.py" "http://127.0.0.1:$((second + 1))" 4 halves/0 > posted-0.json &
first_half=$!
"$tools/post-uploads.py" "http://127.0.0.1:$((second + 2))" 4 halves/1 > posted-1.json
wait "$first_half"
pair_time=$(python3 -c "print($(now) - $started)")
kill "${pair_pids[@]}" 2>/dev/null; wait "${pair_pids[@]}" 2>/dev/null || true
python3 - posted-0.json posted-1.json "$total" <<'PY'
import json, sys
posted = [json.load(open(path)) for path in sys.argv[1:3]]
if any(p["accepted"] != p["uploads"] for p in posted) or sum(p["events"] for p in posted) != int(sys.argv[3]):
    sys.exit(f"error: two collectors did not store every prepared upload: {posted}")
PY
[ "$(psql_store "SELECT count(*) FROM events" pair)" = "$total" ] || { echo "error: the store of two collectors does not hold every event once" >&2; exit 1; }
fresh_collector sixteen
: > attempts.log; : > push-errors.log
pids=()
for phone in $(ls phones/*.sqlite | head -n 16); do
  "$gamelog" push --db "$phone" --to "http://127.0.0.1:$second" > /dev/null 2>> push-errors.log &
  pids+=($!)
done
pushes_failed=0
for pid in "${pids[@]}"; do wait "$pid" || pushes_failed=$((pushes_failed + 1)); done
[ "$pushes_failed" = 0 ] || { echo "error: $pushes_failed of 16 concurrent pushes at the default batch failed:" >&2; sort -u push-errors.log >&2; exit 1; }
# The same logs into one SQLite file with `import`.
mkdir exports
for phone in phones/*.sqlite; do "$gamelog" export --db "$phone" > "exports/$(basename "$phone" .sqlite).jsonl"; done
started=$(now)
"$gamelog" import --db imported.sqlite exports/*.jsonl > /dev/null
import_time=$(python3 -c "print($(now) - $started)")
# The same rows with COPY into a table like the store's (no checks, one statement): the
# limit. The median of three, each into a new table: one COPY of two seconds moved by a
# quarter between runs, and the ratio below with it.
psql_store "COPY events TO '$work/postgres/events.copy'" clean
copy_times=()
for attempt in 1 2 3; do
  psql_store "CREATE TABLE copied_$attempt (LIKE events INCLUDING ALL)" clean
  started=$(now)
  psql_store "COPY copied_$attempt FROM '$work/postgres/events.copy'" clean
  copy_times+=("$(python3 -c "print($(now) - $started)")")
done
copy_time=$(python3 -c "import statistics, sys; print(statistics.median(float(t) for t in sys.argv[1:]))" "${copy_times[@]}")

echo
echo "| ingest of $total events from $phones phones | rate |"
echo "|---|---|"
echo "| through one collector (uploads made beforehand, 8 at a time, every check, countersigned; $collector_latency an answer) | $(rate "$total" "$collector_time") |"
echo "| \`gamelog import\` of the same logs into one SQLite file | $(rate "$total" "$import_time") |"
echo "| PostgreSQL \`COPY\` of the same rows (no checks: the limit; the median of three) | $(rate "$total" "$copy_time") |"
echo "| through one collector against the limit | $(python3 -c "print(f'{$copy_time / $collector_time:.2f}x')") |"
echo "| CPU of the run through one collector ($(nproc) cores) | $cpu_row |"
echo "| through two collectors on one store (the same uploads, half to each, 4 at a time to each) | $(rate "$total" "$pair_time") |"
echo "| through two collectors, all $phones at once, one killed and PostgreSQL crashed | $(rate "$total" "$elapsed") |"
echo "| 16 \`gamelog push\` at once, default batch | all 16 through on the first try |"
echo
echo "| \`verify --workers N\` on the store | time |"
echo "|---|---|"
for n in 1 2 4; do
  started=$(now)
  "$gamelog" verify --db "$store" --workers "$n" > /dev/null 2>&1
  echo "| $n | $(python3 -c "print(f'{$(now) - $started:.1f} s')") |"
done
started=$(now)
"$gamelog" verify --db "$store" > /dev/null 2>&1
echo "| one process, no workers | $(python3 -c "print(f'{$(now) - $started:.1f} s')") |"
