#!/usr/bin/env python3
"""ctest: `berth sim --policy fcfs|easy` against the independent reference (swf_reference.py)
on SWF traces: every metric must agree to 6 significant digits, and EASY must never give a
longer average wait than FCFS.

Usage: check_swf_reference.py BERTH TRACE...   (directories: every *.swf inside)
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KEYS = ['procs', 'jobs', 'dropped', 'avg_wait_s', 'median_wait_s', 'max_wait_s', 'avg_bsld',
        'utilization', 'makespan_s']


def close(a, b):
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def run(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    berth, targets = sys.argv[1], sys.argv[2:]
    traces = []
    for t in targets:
        if os.path.isdir(t):
            traces += sorted(os.path.join(t, f) for f in os.listdir(t) if f.endswith('.swf'))
        elif os.path.exists(t):
            traces.append(t)
    if not traces:
        print('no SWF traces found in', targets)
        return 0
    failures = 0
    for trace in traces:
        waits = {}
        for policy in ('fcfs', 'easy'):
            ref = run([sys.executable, os.path.join(HERE, 'swf_reference.py'), trace, policy])
            got = run([berth, 'sim', trace, '--policy', policy, '--json', '--no-progress'])
            bad = [(k, ref[k], got[k]) for k in KEYS if not close(ref[k], got[k])]
            status = 'OK' if not bad else 'DIFFERS ' + str(bad)
            print(f'{os.path.basename(trace)} {policy}: {got["jobs"]} jobs, '
                  f'avg wait {got["avg_wait_s"]:.6g} s: {status}')
            failures += bool(bad)
            waits[policy] = got['avg_wait_s']
        if waits['easy'] > waits['fcfs'] * (1 + 1e-9):
            print(f'{os.path.basename(trace)}: easy waits longer than fcfs on average')
            failures += 1
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
