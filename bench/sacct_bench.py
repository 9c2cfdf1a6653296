#!/usr/bin/env python3
"""sacct against a history: the report made by the controller (POST /v1/views/sacct) against the
same report made by the client from every record of the window (GET /v1/accounting/jobs), which
sacct still does when the controller is in another time zone.

One controller and agent in a temporary folder (daemon_bench.Bed). The history: --history jobs
submitted held in batches of 1,000 and cancelled (finished rows in the store), --completed jobs
that ran `true` (rows with a batch step), and --pending held jobs left in the queue. Each query
runs --runs times through `berth sacct` as a user types it, alternating the two paths; the
medians and their ratio are printed, and the two paths' outputs must be the same text (exit
status 1 when one differs).

The client-side path is chosen by giving sacct TZ=:/etc/localtime, the system's zone under
another name: the controller (TZ unset) refuses the view and sacct makes the report itself.

Slurm's side is not run: ../shared/bench/slurm/setup.sh configures no accounting storage
(AccountingStorageType=accounting_storage/none), so its sacct has nothing to read.

    python3 bench/sacct_bench.py [--berth build/berth] [--history 20000] [--runs 7]
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_bench import Bed, job  # noqa: E402


def fill(bed, history, completed, pending):
    ids = []
    for start in range(0, history, 1000):
        n = min(1000, history - start)
        s, b = bed.req('POST', '/v1/jobs', {'jobs': [job(hold=True) for _ in range(n)]})
        assert s == 201, (s, b)
        ids += b['job_ids']
    subprocess.run([bed.berth, 'scancel', '-u', str(os.getuid())], env=bed.env, check=True)
    bed.wait(lambda: not bed.get('/v1/jobs')[1]['jobs'], timeout=600)
    done = []
    for _ in range(completed):
        s, b = bed.req('POST', '/v1/jobs', job())
        assert s == 201, (s, b)
        done.append(b['job_id'])
    for _ in range(pending):
        assert bed.req('POST', '/v1/jobs', job(hold=True))[0] == 201
    bed.wait(lambda: all(bed.get(f'/v1/jobs/{i}')[1].get('state') == 'COMPLETED' for i in done),
             timeout=600)
    return ids[0], done[-1]


def run(bed, args, client_side):
    env = dict(bed.env)
    if client_side:
        env['TZ'] = ':/etc/localtime'
    else:
        env.pop('TZ', None)
    t0 = time.perf_counter()
    p = subprocess.run([bed.berth, 'sacct', *args], env=env, capture_output=True, text=True)
    took = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f'sacct {" ".join(args)}: {p.stderr.strip()}')
    return took * 1000, p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--berth', default='build/berth')
    ap.add_argument('--history', type=int, default=20000, help='finished (cancelled) jobs')
    ap.add_argument('--completed', type=int, default=20, help='jobs that ran')
    ap.add_argument('--pending', type=int, default=500, help='held jobs left pending')
    ap.add_argument('--runs', type=int, default=7)
    a = ap.parse_args()
    if 'TZ' in os.environ:
        sys.exit('sacct_bench: run it with TZ unset (the controller must be in the system zone)')
    bed = Bed(os.path.abspath(a.berth))
    failed = False
    try:
        t0 = time.time()
        oldest, newest = fill(bed, a.history, a.completed, a.pending)
        print(f'history: {a.history} cancelled, {a.completed} completed, {a.pending} pending '
              f'({time.time() - t0:.0f} s to fill)')
        queries = [
            ('sacct -j <newest>', ['-j', str(newest)]),
            ('sacct -j <oldest>', ['-j', str(oldest)]),
            ('sacct -X -n -P -o JobID,State', ['-X', '-n', '-P', '-o', 'JobID,State']),
            ('sacct (default: today, all rows)', []),
            ('sacct -s CD -X', ['-s', 'CD', '-X']),
            ('sacct -u nobody', ['-u', 'nobody']),
        ]
        print(f'{"query":36s} {"lines":>7s} {"client-side ms":>15s} {"view ms":>9s} {"ratio":>7s}')
        for name, qargs in queries:
            client, view = [], []
            texts = set()
            for _ in range(a.runs):
                for side, out in ((True, client), (False, view)):
                    ms, text = run(bed, qargs, side)
                    out.append(ms)
                    texts.add(text)
            c, v = statistics.median(client), statistics.median(view)
            lines = max(t.count('\n') for t in texts)
            same = len(texts) == 1
            failed = failed or not same
            print(f'{name:36s} {lines:7d} {c:15.1f} {v:9.1f} {c / v:6.2f}x'
                  + ('' if same else '  OUTPUTS DIFFER'))
    finally:
        bed.stop()
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
