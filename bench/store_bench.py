#!/usr/bin/env python3
"""The controller's store, SQLite against etcd (issue 22, docs/adr/0007-etcd-store.md), in one run
on this machine, through the same daemons as daemon_bench.py:

  submit_api_batch   POST /v1/jobs with 1,000 held jobs per request (20,000 jobs)
  submit_api_single  POST /v1/jobs one held job per request, one client (1,000 jobs)
  submit_api_par8    the same from 8 clients at once (group commit at work)
  sbatch_seq         `berth sbatch --hold --wrap true`, one process after another (200 jobs)
  restart_100k       kill -9 of the controller holding 100,000 held jobs: time until it answers
                     again (a full load of the store), with every job checked back

Stores: sqlite (the state folder's state.db, synchronous=FULL), etcd1 (a 1-member etcd on
loopback) and etcd3 (3 members on loopback), each etcd with its data in a temporary folder on
the same disk as the SQLite file. Usage:

  python3 bench/store_bench.py [--berth build/berth] [--quick] [--stores sqlite,etcd1,etcd3]
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_bench import Bed, api_batch, api_single, job  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class Etcd:
    def __init__(self, members):
        self.dir = tempfile.mkdtemp(prefix='berth-bench-etcd-')
        names = [f'm{i}' for i in range(members)]
        self.client = {n: free_port() for n in names}
        peer = {n: free_port() for n in names}
        initial = ','.join(f'{n}=http://127.0.0.1:{peer[n]}' for n in names)
        self.procs = []
        for n in names:
            c, p = f'http://127.0.0.1:{self.client[n]}', f'http://127.0.0.1:{peer[n]}'
            self.procs.append(subprocess.Popen(
                ['etcd', '--name', n, '--data-dir', os.path.join(self.dir, n),
                 '--listen-client-urls', c, '--advertise-client-urls', c,
                 '--listen-peer-urls', p, '--initial-advertise-peer-urls', p,
                 '--initial-cluster', initial, '--quota-backend-bytes', str(8 << 30)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        end = time.time() + 30
        while not all(self.healthy(n) for n in names):
            if time.time() > end:
                raise RuntimeError('etcd did not start')
            time.sleep(0.1)
        self.url = 'etcd://' + ','.join(f'127.0.0.1:{self.client[n]}' for n in names) + '/bench'

    def healthy(self, n):
        try:
            with urllib.request.urlopen(f'http://127.0.0.1:{self.client[n]}/health',
                                        timeout=1) as r:
                return b'true' in r.read()
        except OSError:
            return False

    def stop(self):
        for p in self.procs:
            p.kill()
            p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def api_par(bed, n, par):
    def one(_):
        b = Bed.__new__(Bed)  # a connection of its own on the same bed
        b.sock, b.conn = bed.sock, None
        for _ in range(n // par):
            assert b.req('POST', '/v1/jobs', job(hold=True))[0] == 201
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(par) as pool:
        list(pool.map(one, range(par)))
    return n / (time.time() - t0)


def sbatch_seq(bed, n):
    cmd = [bed.berth, 'sbatch', '--hold', '--chdir=/tmp', '--output=/dev/null', '--wrap', 'true']
    t0 = time.time()
    for _ in range(n):
        subprocess.run(cmd, env=bed.env, check=True, stdout=subprocess.DEVNULL)
    return n / (time.time() - t0)


def measure(berth, store_url, scale):
    # Each bed its own key prefix in the same etcd (the restart counts its own jobs only).
    def args(n):
        if store_url is None:
            return []
        return ['--store', f'{store_url}/bed{n}']
    r = {}
    bed = Bed(berth, controller_args=args(1))
    try:
        r['submit_api_batch'] = api_batch(bed, 20000 // scale, 1000)
        r['submit_api_single'] = api_single(bed, 1000 // scale)
        r['submit_api_par8'] = api_par(bed, 2000 // scale, 8)
        r['sbatch_seq'] = sbatch_seq(bed, 200 // scale)
        bed.stop()
        bed = Bed(berth, controller_args=args(2))
        n = 100000 // scale
        api_batch(bed, n, 1000)
        t0 = time.time()
        bed.ctl.send_signal(signal.SIGKILL)
        bed.ctl.wait()
        bed.start_controller()
        r['restart_100k_s'] = time.time() - t0
        s, b = bed.get('/v1/jobs?state=PENDING')
        r['restart_jobs_recovered'] = len(b['jobs'])
    finally:
        bed.stop()
    return r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--berth', default='build/berth')
    ap.add_argument('--quick', action='store_true', help='a tenth of every count')
    ap.add_argument('--stores', default='sqlite,etcd1,etcd3')
    a = ap.parse_args()
    scale = 10 if a.quick else 1
    results = {}
    for store in a.stores.split(','):
        etcd = None
        try:
            if store != 'sqlite':
                etcd = Etcd(int(store[len('etcd'):]))
            results[store] = measure(a.berth, etcd.url if etcd else None, scale)
        finally:
            if etcd:
                etcd.stop()
    keys = list(next(iter(results.values())))
    print(f'{"":<24}' + ''.join(f'{s:>12}' for s in results))
    for k in keys:
        print(f'{k:<24}' + ''.join(f'{results[s][k]:12.2f}' for s in results))
    print(json.dumps(results))


if __name__ == '__main__':
    sys.exit(main())
