#!/usr/bin/env python3
"""ctest: `berth sim POD_LIST --cluster NODE_LIST --fill` as users run it (docs/sim.md "GPU fill
experiment"): the JSON shape on a small cut of the openb lists (the first 60 nodes and 400 pods;
a synthetic list when the shared test data is absent), the table, --plot, and the errors.
Usage: sim_fill_test.py BERTH SHARED_TESTDATA"""
import json
import os
import subprocess
import sys
import tempfile

BERTH, SHARED = sys.argv[1], sys.argv[2]
OPENB = os.path.join(SHARED, 'gpu/alibaba-gpu-v2023')
POLICIES = ['first-fit', 'best-fit', 'dot-product', 'gpu-packing', 'fgd']
failures = []


def run(*args):
    p = subprocess.run([BERTH, 'sim', *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=''):
    print(('ok   ' if cond else 'FAIL ') + name + ('' if cond else ': ' + detail))
    if not cond:
        failures.append(name)


def head(src, dst, lines):
    with open(src) as f, open(dst, 'w') as out:
        for i, line in enumerate(f):
            if i > lines:
                break
            out.write(line)


with tempfile.TemporaryDirectory() as tmp:
    nodes, pods = os.path.join(tmp, 'nodes.csv'), os.path.join(tmp, 'pods.csv')
    if os.path.isdir(OPENB):
        head(os.path.join(OPENB, 'openb_node_list_gpu_node.csv'), nodes, 60)
        head(os.path.join(OPENB, 'openb_pod_list_default.csv'), pods, 400)
    else:
        print('note: no shared openb data; a synthetic cut instead')
        with open(nodes, 'w') as f:
            f.write('sn,cpu_milli,memory_mib,gpu,model\n')
            f.writelines(f'n{i},64000,262144,{2 if i % 2 else 8},{"P100" if i % 2 else "G2"}\n'
                         for i in range(60))
        with open(pods, 'w') as f:
            f.write('name,cpu_milli,memory_mib,num_gpu,gpu_milli\n')
            f.writelines(f'p{i},{4000 + 1000 * (i % 5)},8192,{[1, 1, 0, 2][i % 4]},'
                         f'{[460, 1000, 0, 1000][i % 4]}\n' for i in range(400))

    rc, out, err = run(pods, '--cluster', nodes, '--fill', '--placement', ','.join(POLICIES),
                       '--json')
    runs = json.loads(out) if rc == 0 else []
    check('json array per placement', rc == 0 and [r['placement'] for r in runs] == POLICIES,
          out + err)
    want = {str(c) for c in (80, 90, 100, 110, 130)}
    for r in runs:
        u = r['unallocated_gpus']
        check(f'{r["placement"]}: keys', set(u) == want and isinstance(r['gpus_total'], int)
              and r['gpus_total'] > 0, str(r))
        check(f'{r["placement"]}: values in range',
              all(0 <= u[k] <= r['gpus_total'] for k in want) and u['130'] <= u['80'], str(u))
        check(f'{r["placement"]}: counts add up',
              r['pods_placed'] + r['pods_refused'] == r['pods_arrived'], str(r))

    plots = os.path.join(tmp, 'plots')
    rc, out, err = run(pods, '--cluster', nodes, '--fill', '--seed', '3', '--plot', plots)
    check('table', rc == 0 and 'GPUs left unallocated' in out and 'fgd' in out and
          'gpu-packing' in out, out + err)
    svg = os.path.join(plots, 'fill_pods.svg')
    check('plot', os.path.exists(svg) and '<polyline' in open(svg).read(), err)

    rc, out, err = run(pods, '--cluster', nodes, '--fill', '--placement', 'worst-fit')
    check('bad placement', rc == 1 and "unknown GPU placement 'worst-fit'" in err, err)
    rc, out, err = run(pods, '--fill')
    check('fill needs a node list', rc == 1 and '--fill needs --cluster NODE_LIST' in err, err)
    rc, out, err = run(pods, '--cluster', pods, '--fill')
    check('cluster is not a node list', rc == 1 and 'is not a node list' in err, err)
    bad = os.path.join(tmp, 'bad_nodes.csv')
    with open(bad, 'w') as f:
        f.write('sn,cpu_milli,memory_mib,gpu,model\nn1,64000,1024,2,P100\nn2,x,1024,2,P100\n')
    rc, out, err = run(pods, '--cluster', bad, '--fill')
    check('malformed node row names file:line', rc == 1 and 'bad_nodes.csv:3:' in err, err)
    rc, out, err = run(pods, '--cluster', nodes, '--json', '--no-progress')
    d = json.loads(out) if rc == 0 else {}
    check('replay on a node list', rc == 0 and d.get('jobs', 0) > 0, out + err)
    rc, out, err = run(pods, '--placement', 'fgd')
    check('placement without fill', rc == 2 and '--placement applies to --fill only' in err, err)

print(f'{len(failures)} failed' if failures else 'all passed')
sys.exit(1 if failures else 0)
