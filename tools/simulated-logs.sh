# Sourced by the benchmark scripts: a release build of gamelog, and simulated logs made
# once and kept (seed 1, fixed clock, so the same GAMES give the same log every time).
gamelog=.build/release/gamelog

build_gamelog() {
  echo "… building (release)" >&2
  swift build -c release --static-swift-stdlib --product gamelog >/dev/null
}

# simulated_log FOLDER GAMES: makes FOLDER/log-GAMES.sqlite unless it is there.
simulated_log() {
  local db="$1/log-$2.sqlite"
  mkdir -p "$1"
  if [ ! -f "$db" ]; then
    echo "… simulating $2 games into $db" >&2
    # The simulated devices' keys live beside the logs (never in the log's own folder).
    GAMELOG_KEYS="${GAMELOG_KEYS:-$1/keys}" "$gamelog" simulate --games "$2" --seed 1 --clock fixed --db "$db.partial" >/dev/null
    mv "$db.partial" "$db"
    rm -f "$db.partial-wal" "$db.partial-shm"
  fi
}
