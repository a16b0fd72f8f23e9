#!/usr/bin/env bash
# The GPU checklist's measurements (the project's gpu_checklist.md) on a CUDA machine, in commands
# that each fit one device call:
#
#   benchmarks/gpu_checklist.sh checks          # the CUDA tests, then items 1 and 2 (about 5 min)
#   benchmarks/gpu_checklist.sh breakout [SEC]  # item 3: rainbow_iqn on Breakout, 2M frames,
#                                               # stopped (and checkpointed) after SEC seconds
#
# Item 3 takes longer than one device call allows (10 minutes), so it can also span two calls on
# the same warm machine: the first starts the run in a process session of its own, which outlives
# the call, and the second waits for it, stops it if it has not ended, and exports it:
#
#   benchmarks/gpu_checklist.sh breakout-start           # returns once the run has begun
#   benchmarks/gpu_checklist.sh breakout-progress        # its last progress line
#   benchmarks/gpu_checklist.sh breakout-finish [SEC]    # waits at most SEC seconds, then exports
#
# Logs and results go to $OUT (default runs/gpu_checklist): tests.log, learner.log, e2e.log,
# gpu_checklist_breakout.log (the Breakout run's output, a progress line every 30 s),
# breakout_episodes.csv (every recorded episode), learning_curves.png, run.json.
# The Breakout run's own folder is $BREAKOUT_RUN (default /tmp/gpu_checklist_breakout: a device
# call empties $OUT, so the run lives outside it).
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

RUN_DIR=${BREAKOUT_RUN:-/tmp/gpu_checklist_breakout}

# FRAMES and DEVICE: the checklist's 2M frames on CUDA unless set (a short CPU run tries the script)
breakout_command() {
  benchgen run atari_saber rainbow_iqn --tasks breakout --frames "${FRAMES:-2000000}" \
    --num-envs 16 --set device="${DEVICE:-cuda}" --out "$RUN_DIR" --progress-every 30
}
# the run as a shell command line, for timeout and setsid (which run programs, not functions)
BREAKOUT_SHELL="$(declare -f breakout_command); RUN_DIR='$RUN_DIR'; breakout_command"

breakout_export() {
  benchgen export "$RUN_DIR" --output "$OUT/breakout_episodes.csv" && benchgen report "$RUN_DIR" >/dev/null
  cp "$RUN_DIR/report/learning_curves.png" "$RUN_DIR/run.json" "$RUN_DIR.log" "$OUT/" 2>/dev/null
  python3 - "$OUT/breakout_episodes.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
scores = [float(r["score"]) for r in rows if r.get("phase", "train") == "train"]
frames = max((int(r.get("frames_total", 0) or 0) for r in rows), default=0)
last = scores[-100:]
print(f"breakout: {len(scores)} training episodes, last {len(last)} mean {sum(last) / max(1, len(last)):.2f}, frames {frames}")
EOF
}

breakout() {
  local seconds=${1:-420}
  timeout -s TERM "$seconds" bash -c "$BREAKOUT_SHELL" >"$RUN_DIR.log" 2>&1
  echo "breakout: exit $? after at most $seconds s"; tail -4 "$RUN_DIR.log"
  breakout_export
}

breakout_start() {
  # setsid: the run gets a process session of its own, so that it outlives the device call
  setsid bash -c "$BREAKOUT_SHELL" >"$RUN_DIR.log" 2>&1 </dev/null &
  echo $! >"$RUN_DIR.pid"
  for _ in $(seq 1 120); do
    sleep 1
    if ! kill -0 "$(cat "$RUN_DIR.pid")" 2>/dev/null; then
      echo "breakout: the run ended at its start"; tail -20 "$RUN_DIR.log"; return 1
    fi
    grep -q "frames" "$RUN_DIR.log" && break
  done
  echo "breakout: started (pid $(cat "$RUN_DIR.pid"))"; tail -2 "$RUN_DIR.log"
}

breakout_progress() {
  tail -2 "$RUN_DIR.log"
}

breakout_finish() {
  local seconds=${1:-120} pid
  pid=$(cat "$RUN_DIR.pid")
  for _ in $(seq 1 "$seconds"); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "breakout: still running after $seconds s more; stopping it (checkpointed)"
    pkill -TERM -s "$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 120); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  fi
  tail -4 "$RUN_DIR.log"
  breakout_export
}

case ${1:-checks} in
  checks) checks ;;
  breakout) breakout "${2:-420}" ;;
  breakout-start) breakout_start ;;
  breakout-progress) breakout_progress ;;
  breakout-finish) breakout_finish "${2:-120}" ;;
  *) echo "usage: gpu_checklist.sh checks | breakout [SECONDS] | breakout-start | breakout-progress | breakout-finish [SECONDS]" >&2; exit 2 ;;
esac
