#!/usr/bin/env python3
"""Sends prepared uploads (gamelog-bench uploads) to a collector, CONCURRENCY at a time,
one kept-alive connection per sender, and prints one JSON line: how many were accepted,
refused or failed, the events stored, the seconds from the first request to the last
answer, and the answers' latencies (p50, p95, max). The bodies are read before the clock
starts, so the figure is the collector's (and its store's), not this client's.

    tools/post-uploads.py URL CONCURRENCY FOLDER
"""
import http.client, json, os, sys, threading, time, urllib.parse

url, concurrency, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
target = urllib.parse.urlsplit(url)
jobs = []
for name in sorted(os.listdir(folder)):
    if name.endswith(".upload"):
        stem = os.path.join(folder, name[: -len(".upload")])
        with open(stem + ".upload", "rb") as body, open(stem + ".key") as key:
            jobs.append((key.read().strip(), body.read()))
if not jobs:
    sys.exit(f"error: no .upload files in {folder} (make them with gamelog-bench uploads)")

lock = threading.Lock()
results = []
next_job = [0]


def sender():
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
    while True:
        with lock:
            if next_job[0] >= len(jobs):
                return
            key, body = jobs[next_job[0]]
            next_job[0] += 1
        started = time.monotonic()
        try:
            connection.request("POST", "/v1/upload", body=body,
                               headers={"Gamelog-Device-Key": key, "Content-Type": "application/x-ndjson"})
            response = connection.getresponse()
            answer = response.read()
            status = response.status
        except OSError as error:
            connection.close()
            connection = http.client.HTTPConnection(target.hostname, target.port, timeout=300)
            status, answer = 0, str(error).encode()
        stored = 0
        if status == 200:
            stored = json.loads(answer).get("stored", 0)
        with lock:
            results.append((status, time.monotonic() - started, stored, answer[:300]))


started = time.monotonic()
threads = [threading.Thread(target=sender) for _ in range(concurrency)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
elapsed = time.monotonic() - started
latencies = sorted(r[1] for r in results)
failures = [r for r in results if r[0] != 200]
print(json.dumps({
    "uploads": len(results),
    "accepted": len(results) - len(failures),
    "refused": sum(1 for r in failures if 400 <= r[0] < 500),
    "failed": sum(1 for r in failures if not 400 <= r[0] < 500),
    "events": sum(r[2] for r in results),
    "seconds": round(elapsed, 3),
    "p50": round(latencies[len(latencies) // 2], 3),
    "p95": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))], 3),
    "max": round(latencies[-1], 3),
    "firstFailure": failures[0][3].decode(errors="replace") if failures else None,
}))
