#!/usr/bin/env python3
"""ctest: `berth sim` as users run it: the table, --json keys, --compare, --jobs-out, --plot,
--scenario, and the errors (malformed trace line with file:line, --skip-bad, unknown option,
missing file, bad policy) with their exit codes. Usage: sim_cli_test.py BERTH SOURCE_DIR"""
import json
import os
import subprocess
import sys
import tempfile

BERTH, SRC = sys.argv[1], sys.argv[2]
KTH = os.path.join(SRC, 'data/traces/KTH-SP2-1996-2.1-cln.first2000.swf')
PHILLY = os.path.join(SRC, 'data/traces/philly.first500.csv')
failures = []


def run(*args):
    p = subprocess.run([BERTH, 'sim', *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=''):
    print(('ok   ' if cond else 'FAIL ') + name + ('' if cond else ': ' + detail))
    if not cond:
        failures.append(name)


rc, out, err = run(KTH)
check('table', rc == 0 and 'avg wait (s)' in out and 'utilization' in out, out + err)

rc, out, err = run(KTH, '--policy', 'easy', '--json')
d = json.loads(out)
need = ['trace', 'policy', 'procs', 'jobs', 'dropped', 'avg_wait_s', 'median_wait_s',
        'max_wait_s', 'avg_bsld', 'utilization', 'makespan_s']
check('json keys', rc == 0 and all(k in d for k in need), str(d))
check('json values', d['procs'] == 100 and d['jobs'] == 2000 and d['policy'] == 'easy', str(d))

rc, out, err = run(KTH, '--compare', 'fcfs,easy,conservative,multifactor', '--json')
runs = json.loads(out)
check('compare', rc == 0 and [r['policy'] for r in runs] ==
      ['fcfs', 'easy', 'conservative', 'multifactor'], out)

rc, out, err = run(PHILLY, '--nodes', '16', '--json')
d = json.loads(out)
check('gpu trace keys', rc == 0 and all(k in d for k in ['avg_jct_s', 'p95_jct_s',
                                                          'gpu_utilization']), str(d))

with tempfile.TemporaryDirectory() as tmp:
    csv = os.path.join(tmp, 'jobs.csv')
    plots = os.path.join(tmp, 'plots')
    rc, out, err = run(KTH, '--jobs-out', csv, '--plot', plots)
    lines = open(csv).read().splitlines() if os.path.exists(csv) else []
    check('jobs-out', rc == 0 and len(lines) == 2001 and lines[0].startswith('policy,id'),
          str(lines[:2]))
    check('plots', all(os.path.exists(os.path.join(plots, f))
                       for f in ['utilization.svg', 'wait_cdf.svg']), err)

    bad = os.path.join(tmp, 'bad.swf')
    with open(bad, 'w') as f:
        f.write('; MaxProcs: 10\n1 0 -1 100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n'
                '2 5 -1 x100 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n')
    rc, out, err = run(bad)
    check('malformed line names file:line', rc == 1 and 'bad.swf:3' in err, err)
    rc, out, err = run(bad, '--skip-bad', '--json')
    check('skip-bad counts', rc == 0 and json.loads(out)['skipped_bad'] == 1, out + err)

with tempfile.TemporaryDirectory() as tmp:
    # Fractional pods (issue 20) on an openb-style node list: none is dropped, the pod the trace
    # never ran ("Pending", no scheduled_time) included, and two halves of one GPU run at once.
    pods = os.path.join(tmp, 'openb_pod_list_tiny.csv')
    with open(pods, 'w') as f:
        f.write('name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,'
                'creation_time,deletion_time,scheduled_time\n'
                'p0,1000,1024,1,500,,LS,Running,0,100,0\n'
                'p1,1000,1024,1,500,,LS,Running,0,100,0\n'
                'p2,1000,1024,1,250,,BE,Pending,200,300,\n'
                'p3,2000,1024,0,0,,BE,Running,0,50,0\n')
    nodes = os.path.join(tmp, 'openb_node_list_tiny.csv')
    with open(nodes, 'w') as f:
        f.write('sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16384,1,V100M16\n')
    rc, out, err = run(pods, '--cluster', nodes, '--json')
    d = json.loads(out) if rc == 0 else {}
    check('fractional pods kept', rc == 0 and d.get('dropped') == 0 and d.get('jobs') == 4,
          out + err)
    check('two halves share one GPU', d.get('max_wait_s') == 0, out + err)

rc, out, err = run(KTH, '--bogus')
check('unknown option', rc == 2 and "unrecognized option '--bogus'" in err, err)
rc, out, err = run('/nonexistent/trace.swf')
check('missing file', rc == 1 and '/nonexistent/trace.swf' in err, err)
rc, out, err = run(KTH, '--policy', 'lottery')
check('bad policy', rc == 1 and "unknown policy 'lottery'" in err, err)
rc, out, err = run('--help')
check('help', rc == 0 and '--compare' in out, out)
rc, out, err = run('--scenario', os.path.join(SRC, 'data/scenarios/demo.scn'))
check('scenario', rc == 0 and 'preempt' in out and 'start' in out, out + err)

print(f'{len(failures)} failed' if failures else 'all passed')
sys.exit(1 if failures else 0)
