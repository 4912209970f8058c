#!/usr/bin/env python3
"""Many clients at once against a running `gamelog serve`, as people browse it.

Each client (a thread with a keep-alive connection of its own) asks, one request after
another with no pause unless --think says so, for a mix of what the viewer serves: list
pages, filtered list pages, the paged API, game pages at random steps and views, API
steps and verdicts. Prints, for each kind of request and for all, how many, the median,
95th and 99th percentiles and the worst, in milliseconds, and any answer that was not 200.

    tools/viewer_load.py BASE-URL [--clients 50] [--seconds 20] [--think MS] [--seed 1] [--game ID]

With --game, every client asks for that one game alone (its pages, steps and verdict):
many people on one long game.

Standard library only. Stops by itself after --seconds (and at most --max-requests).
"""
import argparse
import http.client
import json
import random
import statistics
import sys
import threading
import time
import urllib.parse

KINDS = [  # (name, weight)
    ("list page", 10),
    ("filtered list", 10),
    ("api list page", 5),
    ("game page", 40),
    ("api step", 25),
    ("api verify", 10),
    ("api game", 0),  # asked once per client and game, for its steps and devices
]


def fetch(connection, path):
    started = time.perf_counter()
    connection.request("GET", path)
    response = connection.getresponse()
    body = response.read()
    return response.status, body, (time.perf_counter() - started) * 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--think", type=float, default=0, help="pause between one client's requests, ms")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-requests", type=int, default=1_000_000)
    parser.add_argument("--label", default="")
    parser.add_argument("--game", help="every client asks for this game alone")
    args = parser.parse_args()
    url = urllib.parse.urlsplit(args.base)
    host, port = url.hostname, url.port or 80

    # The games to ask for: the first pages of the paged API (what a person would reach).
    setup = http.client.HTTPConnection(host, port, timeout=120)
    games = []
    for page in range(1, 6):
        status, body, _ = fetch(setup, f"/api/games?page={page}&per_page=1000")
        if status != 200:
            sys.exit(f"error: /api/games?page={page} answered {status}: {body[:200]!r}")
        batch = json.loads(body)
        games += batch
        if len(batch) < 1000:
            break
    if not games:
        sys.exit("error: the log lists no game")
    kinds_asked = KINDS
    if args.game:
        games = [game for game in games if game["id"] == args.game]
        if not games:
            sys.exit(f"error: the first pages of /api/games do not list {args.game}")
        kinds_asked = [(name, weight if name in ("game page", "api step", "api verify") else 0) for name, weight in KINDS]
    kinds = sorted({g["kind"] for g in games})
    list_pages = max(1, len(games) // 50)
    setup.close()

    lock = threading.Lock()
    samples = {name: [] for name, _ in KINDS}
    failures = []
    deadline = time.monotonic() + args.seconds
    budget = [args.max_requests]

    def client(number):
        rng = random.Random(args.seed * 1000 + number)
        connection = http.client.HTTPConnection(host, port, timeout=120)
        steps = {}  # conversation id -> (steps, devices), learned from /api/games/ID
        names, weights = zip(*kinds_asked)
        while time.monotonic() < deadline:
            with lock:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
            kind = rng.choices(names, weights)[0]
            game = rng.choice(games)
            if kind == "list page":
                path = f"/games?page={rng.randint(1, list_pages)}"
            elif kind == "filtered list":
                choice = rng.randrange(3)
                if choice == 0:
                    path = f"/games?kind={rng.choice(kinds)}&page={rng.randint(1, 5)}"
                elif choice == 1:
                    path = f"/games?status=finished&page={rng.randint(1, 5)}"
                else:
                    path = f"/games?audit=ok&page={rng.randint(1, 5)}"
            elif kind == "api list page":
                path = f"/api/games?page={rng.randint(1, max(1, len(games) // 100))}&per_page=100"
            else:
                known = steps.get(game["id"])
                if known is None:
                    try:
                        status, body, elapsed = fetch(connection, f"/api/games/{game['id']}")
                    except (OSError, http.client.HTTPException) as error:
                        with lock:
                            failures.append(f"/api/games/{game['id']}: {error}")
                        connection = http.client.HTTPConnection(host, port, timeout=120)
                        continue
                    with lock:
                        samples["api game"].append(elapsed)
                        if status != 200:
                            failures.append(f"/api/games/{game['id']}: {status} {body[:120]!r}")
                    document = json.loads(body) if status == 200 else {"steps": 0, "devices": []}
                    known = (document["steps"], document["devices"])
                    steps[game["id"]] = known
                count, devices = known
                if kind == "game page":
                    view = rng.choice(["auditor"] + devices)
                    # A device's own steps are fewer: its page without a step shows its last.
                    path = (f"/games/{game['id']}?step={rng.randint(0, count)}&as=auditor" if view == "auditor"
                            else f"/games/{game['id']}?as={view}")
                elif kind == "api step":
                    path = f"/api/games/{game['id']}/steps/{rng.randint(0, count)}"
                else:
                    path = f"/api/verify/{game['id']}"
            try:
                status, body, elapsed = fetch(connection, path)
            except (OSError, http.client.HTTPException) as error:
                with lock:
                    failures.append(f"{path}: {error}")
                connection = http.client.HTTPConnection(host, port, timeout=120)
                continue
            with lock:
                samples[kind].append(elapsed)
                if status != 200:
                    failures.append(f"{path}: {status} {body[:120]!r}")
            if args.think:
                time.sleep(args.think / 1000)
        connection.close()

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - started

    def row(name, values):
        if not values:
            return f"{name:<22} {0:>7}"
        ordered = sorted(values)
        pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]
        return (f"{name:<22} {len(values):>7} {statistics.median(ordered):>9.1f} {pick(0.95):>9.1f} "
                f"{pick(0.99):>9.1f} {ordered[-1]:>9.1f}")

    every = [v for values in samples.values() for v in values]
    title = f"{args.clients} clients, {args.seconds:g} s" + (f", {args.think:g} ms between requests" if args.think else ", no pause")
    print(f"{args.label}{title}: {len(every)} requests, {len(every) / wall:.0f} requests/s, {len(games)} games asked from")
    print(f"{'request':<22} {'count':>7} {'median':>9} {'p95':>9} {'p99':>9} {'worst':>9}   (ms)")
    for name, weight in kinds_asked:
        if weight or samples[name]:
            print(row(name, samples[name]))
    print(row("all", every))
    print(f"answers other than 200: {len(failures)}")
    for failure in failures[:10]:
        print(f"  {failure}")
    if not every:
        sys.exit("error: no request was answered")


if __name__ == "__main__":
    main()
