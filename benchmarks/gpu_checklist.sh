#!/usr/bin/env bash
# The GPU checklist's measurements (the project's gpu_checklist.md) on a CUDA machine, in two
# commands that each fit one device call:
#
#   benchmarks/gpu_checklist.sh checks          # the CUDA tests, then items 1 and 2 (about 5 min)
#   benchmarks/gpu_checklist.sh breakout [SEC]  # item 3: rainbow_iqn on Breakout, 2M frames,
#                                               # stopped (and checkpointed) after SEC seconds
#
# Logs and results go to $OUT (default runs/gpu_checklist): tests.log, learner.log, e2e.log,
# breakout.log, breakout_episodes.csv (every recorded episode), learning_curves.png, run.json.
# benchgen and its dependencies must be importable (on a bare machine: install the wheels first).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-runs/gpu_checklist}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

checks() {
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
  # Before any timing: the agents' CUDA path against the CPU, eager against graph, end to end.
  timeout 90 python3 -m pytest tests/agents/value_based/test_cuda_path.py -q -n 4 \
    >"$OUT/tests.log" 2>&1
  echo "tests: exit $?"; grep -E "passed|failed|error" "$OUT/tests.log" | tail -3
  # Item 1: learner updates per second.
  timeout 200 python3 benchmarks/bench_gpu_learner.py --agents rainbow_iqn,rainbow:der,dqn:drq_eps \
    >"$OUT/learner.log" 2>&1
  echo "learner: exit $?"; grep -v "^ *\(STAGE\|USDT\)" "$OUT/learner.log" | tail -30
  # Item 2: end-to-end frames per second on the node.
  timeout 150 python3 benchmarks/bench_gpu_e2e.py --steps 8000 --learning-starts 4000 >"$OUT/e2e.log" 2>&1
  echo "e2e: exit $?"; tail -9 "$OUT/e2e.log"
}

breakout() {
  local seconds=${1:-420} run="$OUT/breakout"
  # FRAMES and DEVICE: the checklist's 2M frames on CUDA unless set (a short CPU run tries the script)
  timeout -s TERM "$seconds" benchgen run atari_saber rainbow_iqn --tasks breakout --frames "${FRAMES:-2000000}" \
    --num-envs 16 --set device="${DEVICE:-cuda}" --out "$run" --no-progress --progress-every 30 >"$OUT/breakout.log" 2>&1
  echo "breakout: exit $? after at most $seconds s"; tail -4 "$OUT/breakout.log"
  benchgen export "$run" --output "$OUT/breakout_episodes.csv" && benchgen report "$run" >/dev/null
  cp "$run/report/learning_curves.png" "$run/run.json" "$OUT/" 2>/dev/null
  python3 - "$OUT/breakout_episodes.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
scores = [float(r["score"]) for r in rows if r.get("phase", "train") == "train"]
frames = max((int(r.get("frames_total", 0) or 0) for r in rows), default=0)
last = scores[-100:]
print(f"breakout: {len(scores)} training episodes, last {len(last)} mean {sum(last) / max(1, len(last)):.2f}, frames {frames}")
EOF
}

case ${1:-checks} in
  checks) checks ;;
  breakout) breakout "${2:-420}" ;;
  *) echo "usage: gpu_checklist.sh checks | breakout [SECONDS]" >&2; exit 2 ;;
esac
