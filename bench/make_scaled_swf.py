#!/usr/bin/env python3
"""Builds a large SWF workload by repeating a trace with time shifts (for bench/sim-scale).

Copy k of the trace is shifted by k * span / copies seconds, where span is the trace's length,
and wrapped around into [0, span): the copies overlap evenly over the whole span, so the load
is the trace's own load times the number of copies, uniformly. Job ids are renumbered;
everything else is kept, except that with PROCS_SCALE the processor counts (fields 5 and 8,
allocated and requested) are multiplied by it, for multi-node jobs on a larger machine.

Usage: make_scaled_swf.py TRACE COPIES [PROCS_SCALE] > OUT.swf
"""
import sys


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[-1])
    path, copies = sys.argv[1], int(sys.argv[2])
    procs_scale = int(sys.argv[3]) if len(sys.argv) == 4 else 1
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
    scaled = f', processor counts x{procs_scale}' if procs_scale != 1 else ''
    out.write(f'; Note: {copies} time-shifted copies of {path.split("/")[-1]} '
              f'({len(jobs)} jobs each{scaled})\n')
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
        if procs_scale != 1:
            for i in (4, 7):  # allocated and requested processors; -1 stays unknown
                if int(float(g[i])) > 0:
                    g[i] = str(int(float(g[i])) * procs_scale)
        next_id += 1
        out.write(' '.join(g) + '\n')


if __name__ == '__main__':
    main()
