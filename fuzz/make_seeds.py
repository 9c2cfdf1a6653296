#!/usr/bin/env python3
"""Builds the fuzz targets' seed corpora from real data (docs/fuzzing.md).

    python3 fuzz/make_seeds.py OUT_DIR [TESTDATA_DIR]

Writes OUT_DIR/<target>/<name> for every target, from ../shared/testdata (batch scripts, traces,
Kubernetes manifests), the project's own data/ and tests/golden/ (cluster files, scenario
options), and the Slurm configuration of the sbatch oracle. Big files are cut to their first
lines: libFuzzer's inputs stay small (and fast) that way. The hand-written seeds committed in
fuzz/corpus/<target>/ are read by bench/fuzz directly, not copied here.
"""
import glob
import hashlib
import json
import os
import re
import sys

MAX_SEED = 8192  # bytes; cut at a line boundary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def write(out, target, data, name=None):
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > MAX_SEED:
        cut = data.rfind(b"\n", 0, MAX_SEED)
        data = data[: cut + 1 if cut > 0 else MAX_SEED]
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = name or hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def head_lines(data, n):
    return b"".join(data.splitlines(keepends=True)[:n])


def sbatch_directive_options(script):
    """The "--name=value" words of a script's #SBATCH lines."""
    for line in script.decode("utf-8", "replace").splitlines():
        m = re.match(r"\s*#SBATCH\s+(.*)", line)
        if not m:
            continue
        for word in m.group(1).split():
            if word.startswith("#"):
                break
            yield word


VALUE_PARSERS = {"time": 0, "t": 0, "mem": 2, "mem-per-cpu": 2, "mem-per-gpu": 2, "array": 3,
                 "a": 3, "dependency": 4, "d": 4}


def main():
    out = sys.argv[1]
    testdata = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "..", "shared", "testdata")
    have_testdata = os.path.isdir(testdata)

    # #SBATCH scripts, and their option words for job_options and slurm_values.
    options = []
    for path in sorted(glob.glob(os.path.join(testdata, "sbatch", "*"))):
        script = read(path)
        write(out, "sbatch_script", script, os.path.basename(path)[:100])
        options.extend(sbatch_directive_options(script))
    for path in sorted(glob.glob(os.path.join(ROOT, "tests", "golden", "*.scn"))):
        text = read(path).decode("utf-8", "replace")
        config = [l for l in text.splitlines() if l and not l.startswith(("at ", "#"))]
        write(out, "slurm_conf", "\n".join(config) + "\n")
        for line in text.splitlines():
            if line.startswith("at ") and " submit " in line:
                options.extend(w for w in line.split(" submit ", 1)[1].split() if w.startswith("--"))
    for word in sorted(set(options)):
        m = re.match(r"--?([a-z-]+)(?:=(.*))?$", word)
        if not m:
            continue
        name, value = m.group(1), m.group(2) or ""
        write(out, "job_options", f"{name}={value}\n" if m.group(2) is not None else name + "\n")
        if name in VALUE_PARSERS and value:
            write(out, "slurm_values", bytes([VALUE_PARSERS[name]]) + value.encode())
            if VALUE_PARSERS[name] == 0:
                write(out, "slurm_values", bytes([1]) + value.encode())
        for key in ("nodelist", "exclude", "w", "x"):
            if name == key and value:
                write(out, "hostlist", value)

    # Cluster configuration files: berth's and a real slurm.conf.
    for path in [os.path.join(ROOT, "data", "traces", "example-cluster.conf"),
                 os.path.join(testdata, "..", "bench", "slurm", "oracle", "slurm.conf")]:
        if os.path.isfile(path):
            conf = read(path)
            write(out, "slurm_conf", conf, os.path.basename(os.path.dirname(path)) + ".conf")
            for m in re.finditer(rb"(?:Nodes|NodeName)=(\S+)", conf):
                write(out, "hostlist", m.group(1))

    # Traces: the first lines of each file, and a run of lines from its middle.
    def trace_seeds(target, pattern):
        for path in sorted(glob.glob(pattern, recursive=True)):
            data = read(path)
            lines = data.splitlines(keepends=True)
            base = os.path.basename(path)
            write(out, target, head_lines(data, 60), base + ".head")
            if len(lines) > 200:
                header = [l for l in lines[:40] if l.startswith(b";")] if target == "swf" else lines[:1]
                mid = len(lines) // 2
                write(out, target, b"".join(header + lines[mid:mid + 40]), base + ".mid")

    trace_seeds("swf", os.path.join(testdata, "swf", "**", "*.swf"))
    trace_seeds("swf", os.path.join(ROOT, "data", "traces", "*.swf"))
    trace_seeds("gpu_csv", os.path.join(testdata, "gpu", "**", "*.csv"))
    trace_seeds("gpu_csv", os.path.join(ROOT, "data", "traces", "*.csv"))
    trace_seeds("jsonl", os.path.join(ROOT, "data", "traces", "*.jsonl"))
    for path in glob.glob(os.path.join(ROOT, "data", "traces", "*.jsonl")):
        for line in read(path).splitlines():
            job = json.loads(line)
            for key in ("id", "submit", "run", "exit_code"):
                job.pop(key, None)
            write(out, "job_json", json.dumps(job))

    # Kubernetes manifests: YAML as published, each document as the JSON kubectl would send.
    try:
        import yaml
    except ImportError:
        yaml = None
        print("make_seeds: python3-yaml missing; no k8s_manifest seeds from testdata", file=sys.stderr)
    if yaml:
        for path in sorted(glob.glob(os.path.join(testdata, "k8s", "*.yaml"))):
            try:
                docs = list(yaml.safe_load_all(read(path)))
            except yaml.YAMLError:
                continue  # some are invalid as published
            for i, doc in enumerate(docs):
                if doc is not None:
                    write(out, "k8s_manifest", json.dumps(doc, default=str),
                          f"{os.path.basename(path)}.{i}.json")

    if not have_testdata:
        print(f"make_seeds: {testdata} not found; seeds from the project's own files only",
              file=sys.stderr)
    for target in sorted(os.listdir(out)):
        print(f"make_seeds: {target}: {len(os.listdir(os.path.join(out, target)))} seeds")


if __name__ == "__main__":
    main()
