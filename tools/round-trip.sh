#!/usr/bin/env bash
# Two phones, one collector, one shared store: the README's round trip, as CI runs it.
# Needs PostgreSQL installed and `gamelog` on PATH (or GAMELOG_BIN); works in a scratch
# folder with keys of its own, and stops what it started.
set -euo pipefail
tools=$(cd "$(dirname "$0")" && pwd)
# GAMELOG_BIN: a gamelog that is not on PATH (CI's fresh build).
[ -n "${GAMELOG_BIN:-}" ] && export PATH="$(dirname "$GAMELOG_BIN"):$PATH"
cd "$(mktemp -d)"
chmod 755 .   # the server's folder is in here, and as root it runs as the postgres user
export GAMELOG_KEYS=$PWD/keys GAMELOG_CACHE=$PWD/cache GAMELOG_PG_DIR=$PWD/postgres
trap '"$tools/shared-store.sh" stop >/dev/null' EXIT

# 1. A local PostgreSQL and a collector on it (the administrator's token goes to $GAMELOG_KEYS).
"$tools/shared-store.sh" start
store=postgres://gamelog@127.0.0.1:${GAMELOG_PG_PORT:-55432}/gamelog collector=http://127.0.0.1:${GAMELOG_COLLECTOR_PORT:-8090}

# 2. Two phones play; each records into a log of its own, signed with its device key.
gamelog simulate --games 6 --per-device phones --devices Ann,Ben

# 3. Enroll each phone's public key, then push: the collector checks every line and
#    signature, stores them, and countersigns each phone's head.
gamelog keys enroll --to $collector --device Ann --public-key keys/Ann.key
gamelog keys enroll --to $collector --device Ben --public-key keys/Ben.key
gamelog push --db phones/Ann.sqlite --to $collector
gamelog push --db phones/Ben.sqlite --to $collector
gamelog push --db phones/Ann.sqlite --to $collector   # again: nothing new to send

# 4. A phone's log against the collector's countersigned heads (a rolled-back phone fails here).
gamelog heads --db phones/Ann.sqlite
gamelog verify --db phones/Ann.sqlite --heads $collector

# 5. The shared store reads like any log: its games, an audit split among processes, the viewer.
gamelog games --db $store
gamelog verify --db $store --workers 2
gamelog serve --db $store --port 8091 > serve.out &
viewer=$!
until grep -q "gamelog serve:" serve.out 2>/dev/null; do kill -0 $viewer; sleep 0.2; done
game=$(gamelog games --db $store --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
curl -fsS "http://127.0.0.1:8091/games/$game" | grep -o "verify: [a-z0-9 ]*"
kill $viewer
