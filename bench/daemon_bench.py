#!/usr/bin/env python3
"""Whole-system speed of berth's daemons (issue 4), on this machine:

  submit_cli_seq     `berth submit --hold --wrap true`, one process per submit, one after another
  submit_cli_par8    the same from 8 parallel submitters
  submit_api_single  POST /v1/jobs one job per request, one client
  submit_api_batch   POST /v1/jobs with 1,000 jobs per request
  e2e_trivial        1,000 jobs running /bin/true (1 CPU each), first submit to last end
  start_latency      submit -> the job's first instruction, on an idle cluster (50 samples)
  rss_per_pending    controller RSS growth per pending job (100,000 held jobs)
  restart_100k       kill -9 of the controller holding 100,000 jobs: time until it answers again

Usage: python3 bench/daemon_bench.py [--berth build/berth] [--quick]
Every acknowledgement is durable (SQLite, synchronous=FULL) in all of these.
"""
import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time


class Conn(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__('localhost', timeout=600)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


class Bed:
    def __init__(self, berth, cpus=64, controller_args=()):
        self.berth = berth
        self.controller_args = list(controller_args)  # e.g. --store etcd://... (store_bench.py)
        self.dir = tempfile.mkdtemp(prefix='berth-bench-')
        self.sock = os.path.join(self.dir, 'controller.sock')
        self.env = dict(os.environ, BERTH_SOCKET=self.sock)
        self.cpus = cpus
        self.conn = None
        self.start_controller()
        self.agent = subprocess.Popen(
            [berth, 'agent', '--home', self.dir, '--controller', 'unix:' + self.sock,
             '--node-name', 'bench1', '--cpus', '64'], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.wait(lambda: self.get('/v1/nodes/bench1')[1].get('state') not in (None, 'DOWN'))

    def start_controller(self):
        self.ctl = subprocess.Popen([self.berth, 'controller', '--home', self.dir,
                                     '--socket', self.sock, *self.controller_args],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.conn = None
        self.wait(lambda: self.alive())

    def alive(self):
        try:
            return self.get('/readyz')[0] == 200
        except OSError:
            self.conn = None
            return False

    def req(self, method, path, body=None):
        if self.conn is None:
            self.conn = Conn(self.sock)
        self.conn.request(method, path, body=None if body is None else json.dumps(body),
                          headers={'Content-Type': 'application/json'})
        r = self.conn.getresponse()
        data = r.read()
        return r.status, json.loads(data) if data.strip() else {}

    def get(self, path):
        return self.req('GET', path)

    def wait(self, cond, timeout=120):
        end = time.time() + timeout
        while time.time() < end:
            if cond():
                return
            time.sleep(0.02)
        raise RuntimeError('timed out')

    def rss_kib(self):
        for line in open(f'/proc/{self.ctl.pid}/status'):
            if line.startswith('VmRSS:'):
                return int(line.split()[1])
        return 0

    def stop(self):
        for p in (self.agent, self.ctl):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait(timeout=60)
        subprocess.run(['pkill', '-9', '-f', f'supervise {self.dir}'], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)


def job(script='true', **extra):
    j = {'script': '#!/bin/sh\n' + script + '\n', 'work_dir': '/tmp', 'stdout': '/dev/null',
         'time_limit': 600}
    j.update(extra)
    return j


def cli_submits(bed, n, par):
    cmd = [bed.berth, 'submit', '--hold', '--chdir=/tmp', '--output=/dev/null', '--wrap', 'true']

    def one(_):
        subprocess.run(cmd, env=bed.env, check=True, stdout=subprocess.DEVNULL)
    t0 = time.time()
    with concurrent.futures.ThreadPoolExecutor(par) as pool:
        list(pool.map(one, range(n)))
    return n / (time.time() - t0)


def api_single(bed, n):
    t0 = time.time()
    for _ in range(n):
        assert bed.req('POST', '/v1/jobs', job(hold=True))[0] == 201
    return n / (time.time() - t0)


def api_batch(bed, n, per):
    t0 = time.time()
    for _ in range(n // per):
        s, b = bed.req('POST', '/v1/jobs', {'jobs': [job(hold=True) for _ in range(per)]})
        assert s == 201, b
    return n / (time.time() - t0)


def e2e(bed, n):
    t0 = time.time()
    ids = []
    for _ in range(n // 100):
        s, b = bed.req('POST', '/v1/jobs', {'jobs': [job() for _ in range(100)]})
        ids += b['job_ids']
    last = max(ids)

    def done():
        s, b = bed.get(f'/v1/jobs?state=PENDING,RUNNING')
        return not [j for j in b['jobs'] if j['id'] <= last and j['id'] >= min(ids)]
    bed.wait(done, 600)
    return n / (time.time() - t0)


def latency(bed, n):
    samples = []
    for i in range(n):
        stamp = os.path.join(bed.dir, f'lat{i}')
        t0 = time.time()
        bed.req('POST', '/v1/jobs', job(f'date +%s.%N > {stamp}'))
        bed.wait(lambda: os.path.exists(stamp) and os.path.getsize(stamp) > 0, 30)
        samples.append(float(open(stamp).read()) - t0)
        time.sleep(0.05)
    samples.sort()
    return statistics.median(samples), samples[int(0.99 * (len(samples) - 1))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--berth', default='build/berth')
    ap.add_argument('--quick', action='store_true')
    a = ap.parse_args()
    scale = 10 if a.quick else 1
    results = {}
    bed = Bed(a.berth)
    try:
        results['submit_cli_seq'] = cli_submits(bed, 1000 // scale, 1)
        results['submit_cli_par8'] = cli_submits(bed, 1000 // scale, 8)
        results['submit_api_single'] = api_single(bed, 2000 // scale)
        results['submit_api_batch'] = api_batch(bed, 20000 // scale, 1000 // scale)
        bed.req('POST', '/v1/jobs', job())  # warm
        bed.stop()
        bed = Bed(a.berth)
        p50, p99 = latency(bed, 50 // (5 if a.quick else 1))
        results['start_latency_p50_ms'] = p50 * 1000
        results['start_latency_p99_ms'] = p99 * 1000
        results['e2e_trivial'] = e2e(bed, 1000 // scale)
        bed.stop()
        bed = Bed(a.berth)
        before = bed.rss_kib()
        n = 100000 // scale
        api_batch(bed, n, 1000)
        results['rss_per_pending_kib'] = (bed.rss_kib() - before) / n
        t0 = time.time()
        bed.ctl.send_signal(signal.SIGKILL)
        bed.ctl.wait()
        bed.start_controller()
        results['restart_s'] = time.time() - t0
        s, b = bed.get('/v1/jobs?state=PENDING')
        results['restart_jobs_recovered'] = len(b['jobs'])
    finally:
        bed.stop()
    width = max(len(k) for k in results)
    for k, v in results.items():
        print(f'{k:<{width}}  {v:12.3f}')
    print(json.dumps(results))


if __name__ == '__main__':
    sys.exit(main())
