#!/usr/bin/env python3
"""The floor under a commit on etcd (issue 22): one put of a job-sized value (3 KB) through etcd's
JSON gateway, --n in a row on one connection, on a 1-member and a 3-member etcd on loopback
started here (bench/store_bench.py's), each with its data on this machine's disk. Prints the
median and the 90th percentile per cluster size.

  python3 bench/etcd_put_latency.py [--n 300] [--members 1,3]
"""
import argparse
import base64
import http.client
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from store_bench import Etcd  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=300)
    ap.add_argument('--members', default='1,3')
    a = ap.parse_args()
    value = base64.b64encode(b'x' * 3000).decode()
    for members in [int(m) for m in a.members.split(',')]:
        etcd = Etcd(members)
        try:
            port = next(iter(etcd.client.values()))
            conn = http.client.HTTPConnection('127.0.0.1', port)
            lat = []
            for i in range(a.n):
                key = base64.b64encode(f'/latency/{i}'.encode()).decode()
                body = json.dumps({'success': [{'request_put': {'key': key, 'value': value}}]})
                t0 = time.perf_counter()
                conn.request('POST', '/v3/kv/txn', body, {'Content-Type': 'application/json'})
                conn.getresponse().read()
                lat.append(time.perf_counter() - t0)
            lat.sort()
            print(f'{members} member(s): median {lat[len(lat) // 2] * 1000:.2f} ms, '
                  f'p90 {lat[int(len(lat) * 0.9)] * 1000:.2f} ms over {a.n} puts', flush=True)
        finally:
            etcd.stop()


if __name__ == '__main__':
    main()
