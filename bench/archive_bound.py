#!/usr/bin/env python3
"""etcd stays bounded however many jobs pass through an HA controller (issue 22,
docs/adr/0009-accounting-archive.md): a controller on a loopback etcd (3 members by default) with
the accounting archive in a local PostgreSQL, MinJobAge=2, and the leader compacting etcd every
20 s. Jobs pass through in rounds: 10,000 held jobs submitted through the batch API, then
cancelled (each ends CANCELLED); the archiver moves their records to PostgreSQL. After each
--report-every jobs, one line: jobs passed, etcd's keys under the controller's prefix, etcd's
database size and the part in use (the leader member's /v3/maintenance/status), the rows in
PostgreSQL, the controller's RSS, and the time so far. At the end it waits for the archive to
catch up and checks that every job is in PostgreSQL once.

  python3 bench/archive_bound.py [--berth build/berth] [--jobs 1000000] [--members 3]
"""
import argparse
import base64
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'tests', 'integration'))
from daemon_bench import Bed, job  # noqa: E402
from store_bench import Etcd  # noqa: E402
import postgres  # noqa: E402


def etcd_call(port, path, body):
    req = urllib.request.Request(f'http://127.0.0.1:{port}{path}', data=json.dumps(body).encode(),
                                 headers={'Content-Type': 'application/json'})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def b64(s):
    return base64.b64encode(s.encode()).decode()


def etcd_figures(etcd, prefix):
    port = next(iter(etcd.client.values()))
    count = etcd_call(port, '/v3/kv/range', {'key': b64(prefix + '/'),
                                             'range_end': b64(prefix + '0'),
                                             'count_only': True}).get('count', '0')
    size = in_use = 0
    for p in etcd.client.values():
        s = etcd_call(p, '/v3/maintenance/status', {})
        size = max(size, int(s.get('dbSize', 0)))
        in_use = max(in_use, int(s.get('dbSizeInUse', 0)))
    return int(count), size, in_use


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--berth', default='build/berth')
    ap.add_argument('--jobs', type=int, default=1_000_000)
    ap.add_argument('--members', type=int, default=3)
    ap.add_argument('--report-every', type=int, default=100_000)
    a = ap.parse_args()
    berth = os.path.abspath(a.berth)
    etcd = Etcd(a.members)
    pg = postgres.Postgres()
    conf_dir = tempfile.mkdtemp(prefix='berth-bench-conf-')
    conf = os.path.join(conf_dir, 'cluster.conf')
    with open(conf, 'w') as f:
        f.write('ClusterName=bound\nMinJobAge=2\n')
    prefix = '/bench/bound'
    bed = None
    try:
        bed = Bed(berth, controller_args=['--store', etcd.url + '/bound',
                                          '--accounting-store', pg.conninfo(),
                                          '--config', conf, '--etcd-compaction-interval', '20'])
        print(f'{"jobs":>9} {"etcd_keys":>9} {"etcd_db_MiB":>11} {"in_use_MiB":>10} '
              f'{"pg_rows":>9} {"rss_MiB":>7} {"elapsed_s":>9}', flush=True)
        t0 = time.time()
        passed = 0
        first = None
        while passed < a.jobs:
            ids = []
            for _ in range(10):
                s, b = bed.req('POST', '/v1/jobs', {'jobs': [job(hold=True) for _ in range(1000)]})
                assert s == 201, b
                ids += b['job_ids']
            first = ids[0] if first is None else first
            s, b = bed.req('POST', '/v1/jobs/cancel', {'ids': ids})
            assert s == 200, b
            passed += len(ids)
            if passed % a.report_every == 0 or passed >= a.jobs:
                keys, size, in_use = etcd_figures(etcd, prefix)
                rows = pg.sql("SELECT count(*) FROM berth_jobs WHERE cluster = 'bound'",
                              check=False).stdout.strip() or '0'
                print(f'{passed:>9} {keys:>9} {size / 2**20:>11.1f} {in_use / 2**20:>10.1f} '
                      f'{rows:>9} {bed.rss_kib() / 1024:>7.0f} {time.time() - t0:>9.0f}',
                      flush=True)
        # The archive catches up: every job in PostgreSQL, once.
        end = time.time() + 600
        out = ['0', '0', '', '']
        while time.time() < end:
            # The table is made by the archiver's first connection.
            p = pg.sql("SELECT count(*), count(DISTINCT id), min(id), max(id) FROM berth_jobs "
                       "WHERE cluster = 'bound'", check=False)
            if p.returncode == 0:
                out = p.stdout.split('\t')
                # ...and deleted from etcd: the archiver counts a round's moves at its end.
                moved = bed.get('/v1/stats')[1].get('archive', {}).get('moved', 0)
                if int(out[0]) >= a.jobs and moved >= a.jobs:
                    break
            time.sleep(2)
        keys, size, in_use = etcd_figures(etcd, prefix)
        print(f'caught up after {time.time() - t0:.0f} s: PostgreSQL rows {out[0].strip()}, '
              f'distinct ids {out[1].strip()} (ids {out[2].strip()}..{out[3].strip()}, first '
              f'{first}); etcd keys {keys}, db {size / 2**20:.1f} MiB '
              f'({in_use / 2**20:.1f} MiB in use)', flush=True)
        s, stats = bed.get('/v1/stats')
        print('archiver:', json.dumps(stats.get('archive')), flush=True)
    finally:
        if bed is not None:
            bed.stop()
        pg.remove()
        etcd.stop()
        shutil.rmtree(conf_dir, ignore_errors=True)


if __name__ == '__main__':
    main()
