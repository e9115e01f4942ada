#!/usr/bin/env bash
# The CUDA checks of issue 13 (item 5), as one script to run as is on a machine with a GPU:
#
#     bash benchmarks/gpu_checks.sh [OUT_DIR]
#
# from the repository root. Each step's full output goes to OUT_DIR/<step>.log (default: $OUT when
# set, else ./gpu-results) and one line per step (exit status, seconds) to OUT_DIR/summary.txt; the
# tail of each log is echoed. Steps, each under its own time limit (570 s in all at most, so a
# 600 s run limit holds even if every step times out):
#
#   env          nvidia-smi and torch's view of the device
#   tests-cuda   the test suite's CUDA-marked tests (pytest -m cuda)
#   attention    benchmarks/bench_attention.py on CUDA (ratios vs plain SDPA and HF LLaMA eager,
#                the cost of the finiteness check, which synchronises on CUDA)
#   check-cuda   ropeproof check --quick --no-figures --device cuda
#   check-cpu    the same on the CPU of the same machine, for the ratio and the verdicts
#   verdicts     whether the two reports reach the same verdicts
#   sweep-index  ropeproof sweep index, 10^6 lengths, on CUDA (JSON to /dev/null)
#   sweep-retr   ropeproof sweep retrieval |ALPH| = 8, 10^5 lengths, on CUDA
#   bench-sweeps benchmarks/bench_sweeps.py --quick (device auto: CUDA)
#
# Needs a Python with a CUDA build of torch and the dependencies (and transformers for the HF
# baseline). If the package is not importable it is installed editable without network access, or
# else made importable through a tree of links on PYTHONPATH. Overrides for a dry run elsewhere:
# PYTHON (interpreter), DEVICE (default cuda), LENGTHS (attention lengths, default 128,1024,4096).
set -u -o pipefail

PY=${PYTHON:-python3}
DEVICE=${DEVICE:-cuda}
LENGTHS=${LENGTHS:-128,1024,4096}
OUT_DIR=${1:-${OUT:-gpu-results}}
mkdir -p "$OUT_DIR"
: > "$OUT_DIR/summary.txt"

if ! "$PY" -c "import ropeproof.verify" 2>/dev/null; then
    if ! "$PY" -m pip install --no-deps --no-build-isolation --no-index -e . > "$OUT_DIR/install.log" 2>&1; then
        site=$(mktemp -d)
        mkdir -p "$site/ropeproof"
        cp -rs "$PWD/ropeproof/." "$site/ropeproof/"
        for folder in theory constructions verify paper_figures; do ln -s "$PWD/$folder" "$site/ropeproof/$folder"; done
        export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
        echo "package made importable through links in $site" >> "$OUT_DIR/install.log"
    fi
fi

step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name (limit ${limit} s): $*"
    local start end rc
    start=$(date +%s%N)
    timeout "$limit" "$@" > "$OUT_DIR/$name.log" 2>&1
    rc=$?
    end=$(date +%s%N)
    printf '%-13s exit %3d  %8d ms  %s\n' "$name" "$rc" "$(( (end - start) / 1000000 ))" "$*" | tee -a "$OUT_DIR/summary.txt"
    tail -n 25 "$OUT_DIR/$name.log"
}

step env 20 bash -c "nvidia-smi; $PY -c 'import torch; print(torch.__version__, torch.version.cuda, torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else None, torch.get_num_threads())'"
step tests-cuda 90 "$PY" -m pytest -q -m cuda -p no:cacheprovider tests
step attention 120 "$PY" benchmarks/bench_attention.py --device "$DEVICE" --lengths "$LENGTHS" --repeats 10
step check-cuda 90 "$PY" -m ropeproof check --quick --no-figures --no-progress --device "$DEVICE" --out "$OUT_DIR/report-$DEVICE"
step check-cpu 90 "$PY" -m ropeproof check --quick --no-figures --no-progress --device cpu --out "$OUT_DIR/report-cpu"
step verdicts 10 "$PY" -c "
import json, sys
a, b = (json.load(open(f'$OUT_DIR/report-{d}/report.json')) for d in ('$DEVICE', 'cpu'))
va, vb = ({c['id']: c['verdict'] for c in r['claims']} for r in (a, b))
diff = {k: (va.get(k), vb.get(k)) for k in set(va) | set(vb) if va.get(k) != vb.get(k)}
print('claims', len(va), 'same verdicts on $DEVICE and cpu:', not diff, diff or '')
sys.exit(1 if diff else 0)"
step sweep-index 40 bash -c "$PY -m ropeproof sweep index --theta 0.8660 --lengths 2:1000000 --device $DEVICE --json > /dev/null"
step sweep-retr 60 bash -c "$PY -m ropeproof sweep retrieval --alphabet 8 --theta 0.0027 --lengths 2:100000 --device $DEVICE --json > /dev/null"
step bench-sweeps 50 "$PY" benchmarks/bench_sweeps.py --quick --repeats 3

echo "== summary ($OUT_DIR/summary.txt)"
cat "$OUT_DIR/summary.txt"
