"""A whole dcsgrid process timed from outside, for the benchmark drivers that compare whole runs."""
import json
import subprocess
import time


def run_json(command):
    """Runs `command` (a dcsgrid call with --json); returns its wall seconds and its JSON report.
    Exits naming the command, its status and the end of its stderr when it fails."""
    t0 = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit("%s failed (status %d): %s" % (" ".join(command), done.returncode, done.stderr[-2000:]))
    return wall, json.loads(done.stdout)
