#!/usr/bin/env python3
"""Builds a large SWF workload by repeating a trace with time shifts (for bench/sim-scale).

Copy k of the trace is shifted by k * span / copies seconds, where span is the trace's length,
and wrapped around into [0, span): the copies overlap evenly over the whole span, so the load
is the trace's own load times the number of copies, uniformly. Job ids are renumbered;
everything else is kept.

Usage: make_scaled_swf.py TRACE COPIES > OUT.swf
"""
import sys


def main():
    path, copies = sys.argv[1], int(sys.argv[2])
    jobs = []
    for raw in open(path):
        line = raw.strip()
        if not line or line.startswith(';'):
            continue
        fields = line.split()
        jobs.append(fields)
    submits = [int(float(f[1])) for f in jobs]
    first, last = min(submits), max(submits)
    span = max(1, last - first)
    out = sys.stdout
    out.write(f'; Note: {copies} time-shifted copies of {path.split("/")[-1]} ({len(jobs)} jobs each)\n')
    next_id = 1
    rows = []
    for k in range(copies):
        shift = k * span // copies
        for f, s in zip(jobs, submits):
            rows.append(((s - first + shift) % span, f))
    rows.sort(key=lambda r: r[0])
    for submit, f in rows:
        g = list(f)
        g[0] = str(next_id)
        g[1] = str(submit)
        next_id += 1
        out.write(' '.join(g) + '\n')


if __name__ == '__main__':
    main()
