#!/usr/bin/env python3
"""Simulates how `mpirun -n N dcsgrid batch` shares frames out, against static splits.

Dynamic (what dcsgrid does): every rank takes the next frame from one counter on rank 0 when it
finishes one (an MPI fetch-and-add that costs --grab-us, serialized at rank 0). Static: contiguous
blocks (batch --shard I/N), or round robin (frame i to rank i mod N). Per-frame seconds are drawn
from a log-normal of the given mean and coefficient of variation, or read from --times (one number
a line, e.g. measured per-frame times), optionally sorted (--trend rising: later frames cost more,
as in an ensemble ordered by size). Prints the makespan and the balance (work / (ranks x makespan)).

    /usr/bin/python3 tools/simulate_frame_schedule.py --ranks 1024 --frames 1000000 --mean 0.0016 --cv 0.3
"""
import argparse
import heapq

import numpy as np


def frame_times(args):
    if args.times:
        base = np.loadtxt(args.times, dtype=float).ravel()
        rng = np.random.default_rng(args.seed)
        times = rng.choice(base, size=args.frames, replace=True)
    else:
        sigma = np.sqrt(np.log1p(args.cv ** 2))
        mu = np.log(args.mean) - sigma ** 2 / 2
        times = np.random.default_rng(args.seed).lognormal(mu, sigma, args.frames)
    if args.trend == "rising":
        times = np.sort(times)
    return times


def dynamic(times, ranks, grab, chunk):
    """Greedy: the earliest free rank takes the next `chunk` frames; grabs are serialized at the
    counter."""
    work = np.add.reduceat(times, np.arange(0, len(times), chunk))
    free = [(0.0, r) for r in range(ranks)]
    heapq.heapify(free)
    counter_free = 0.0  # when rank 0's counter can serve the next fetch-and-add
    end = 0.0
    for t in work:
        ready, rank = heapq.heappop(free)
        counter_free = max(ready, counter_free) + grab
        done = counter_free + t
        end = max(end, done)
        heapq.heappush(free, (done, rank))
    return end


def static_blocks(times, ranks):
    n = len(times)
    bounds = [r * n // ranks for r in range(ranks + 1)]
    return max(times[bounds[r]:bounds[r + 1]].sum() for r in range(ranks))


def round_robin(times, ranks):
    return max(times[r::ranks].sum() for r in range(ranks))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=1024)
    p.add_argument("--frames", type=int, default=1_000_000)
    p.add_argument("--mean", type=float, default=0.0016, help="mean seconds a frame")
    p.add_argument("--cv", type=float, default=0.3, help="coefficient of variation of frame times")
    p.add_argument("--times", help="file of measured per-frame seconds to draw from")
    p.add_argument("--trend", choices=["none", "rising"], default="none")
    p.add_argument("--grab-us", type=float, default=2.0, help="fetch-and-add at rank 0, microseconds")
    p.add_argument("--chunk", type=int, default=1,
                   help="frames a grab takes (dcsgrid takes 1; more relieves the counter)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    times = frame_times(args)
    work = times.sum()
    ideal = work / args.ranks
    print(f"{args.frames} frames on {args.ranks} ranks: work {work:.1f} s, ideal makespan {ideal:.3f} s "
          f"(frame mean {times.mean() * 1e3:.3f} ms, cv {times.std() / times.mean():.2f}, trend {args.trend})")
    grab = args.grab_us * 1e-6
    for name, makespan in [("dynamic counter, 1 a grab", dynamic(times, args.ranks, grab, 1)),
                           (f"dynamic counter, {args.chunk} a grab", dynamic(times, args.ranks, grab, args.chunk)),
                           ("contiguous blocks (--shard)", static_blocks(times, args.ranks)),
                           ("round robin", round_robin(times, args.ranks))]:
        print(f"  {name:28s} makespan {makespan:9.3f} s  balance {ideal / makespan:6.3f}")


if __name__ == "__main__":
    main()
