#!/usr/bin/env bash
# A shared store to try gamelog's collector on one machine: a PostgreSQL server in a
# folder of its own (initdb and pg_ctl of the installed PostgreSQL; as the `postgres`
# user when run as root) and `gamelog collect` on it, both in the background.
#
#   tools/shared-store.sh start    prints the store's URL and the collector's
#   tools/shared-store.sh stop     stops both (the data stays; start again to resume)
#   tools/shared-store.sh delete   stops both and deletes the data
#
# Settings: GAMELOG_PG_DIR (default ~/.local/share/gamelog/postgres, or /var/tmp/gamelog-postgres
# as root), GAMELOG_PG_PORT (55432), GAMELOG_COLLECTOR_PORT (8090), GAMELOG_BIN (default:
# `gamelog` on PATH, else this checkout's debug build, built if missing).
set -euo pipefail
command=${1:-start}
if [ "$(id -u)" = 0 ]; then default_dir=/var/tmp/gamelog-postgres; else default_dir=${XDG_DATA_HOME:-$HOME/.local/share}/gamelog/postgres; fi
dir=${GAMELOG_PG_DIR:-$default_dir}
port=${GAMELOG_PG_PORT:-55432}
collector_port=${GAMELOG_COLLECTOR_PORT:-8090}
url="postgres://gamelog@127.0.0.1:$port/gamelog"

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
[ -x "$bin/pg_ctl" ] || bin=$(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/pg_ctl)")
if [ ! -x "$bin/pg_ctl" ]; then
  echo "error: PostgreSQL is not installed (no pg_ctl): sudo apt-get install postgresql" >&2
  exit 1
fi
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

gamelog_binary() {
  if [ -n "${GAMELOG_BIN:-}" ]; then echo "$GAMELOG_BIN"; return; fi
  if command -v gamelog >/dev/null; then command -v gamelog; return; fi
  local root; root=$(cd "$(dirname "$0")/.." && pwd)
  swift build --package-path "$root" --product gamelog >&2
  echo "$(swift build --package-path "$root" --show-bin-path)/gamelog"
}

stop() {
  if [ -f "$dir/collect.pid" ]; then
    kill "$(cat "$dir/collect.pid")" 2>/dev/null || true
    rm -f "$dir/collect.pid"
  fi
  if [ -f "$dir/data/postmaster.pid" ]; then as_postgres "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null; fi
}

case "$command" in
start)
  mkdir -p "$dir"
  if [ ! -d "$dir/data" ]; then
    if [ "$(id -u)" = 0 ]; then
      chown postgres "$dir"
      if ! runuser -u postgres -- test -w "$dir"; then
        echo "error: the postgres user cannot reach $dir (a folder above it is private): set GAMELOG_PG_DIR to a folder under /var/tmp" >&2
        exit 1
      fi
    fi
    as_postgres "$bin/initdb" -D "$dir/data" -U gamelog --auth=trust -E UTF8 >/dev/null
  fi
  if [ ! -f "$dir/data/postmaster.pid" ]; then
    if ! as_postgres "$bin/pg_ctl" -D "$dir/data" -l "$dir/data/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='$dir/data'" start >/dev/null; then
      tail -n 3 "$dir/data/server.log" >&2
      echo "error: PostgreSQL did not start (if port $port is taken, set GAMELOG_PG_PORT to another)" >&2
      exit 1
    fi
  fi
  as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U gamelog -d postgres -Atqc "SELECT 1 FROM pg_database WHERE datname = 'gamelog'" | grep -q 1 \
    || as_postgres "$bin/psql" -h 127.0.0.1 -p "$port" -U gamelog -d postgres -qc "CREATE DATABASE gamelog"
  if [ -f "$dir/collect.pid" ] && kill -0 "$(cat "$dir/collect.pid")" 2>/dev/null; then
    echo "store:     $url"
    echo "collector: http://127.0.0.1:$collector_port (already running)"
    exit 0
  fi
  gamelog=$(gamelog_binary)
  nohup "$gamelog" collect --db "$url" --port "$collector_port" > "$dir/collect.log" 2>&1 < /dev/null &
  echo $! > "$dir/collect.pid"
  for _ in $(seq 1 300); do
    grep -q "gamelog collect: http" "$dir/collect.log" 2>/dev/null && break
    if ! kill -0 "$(cat "$dir/collect.pid")" 2>/dev/null; then
      echo "error: gamelog collect did not start:" >&2; cat "$dir/collect.log" >&2; exit 1
    fi
    sleep 0.1
  done
  grep "wrote the" "$dir/collect.log" || true
  echo "store:     $url"
  echo "collector: http://127.0.0.1:$collector_port (log: $dir/collect.log)"
  ;;
stop)
  stop
  echo "stopped; the data stays in $dir"
  ;;
delete)
  stop
  rm -rf "$dir"
  echo "deleted $dir"
  ;;
*)
  echo "usage: tools/shared-store.sh start|stop|delete" >&2
  exit 64
  ;;
esac
