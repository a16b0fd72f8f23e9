#!/usr/bin/env bash
# The Procgen proof runs (issue 44): PPO with the paper's IMPALA CNN and settings (the suite's
# tuned/ppo.yaml), easy mode, 200 training levels (protocol easy200), seed 0: coinrun for 2M steps,
# then starpilot for 1M; and benchgen's random agent on both games under the same protocol (its
# training and test-level episodes are random play's scores). Each run's episodes are exported to
# benchmarks/results/procgen/ as soon as it ends (benchmarks/procgen_table.py tabulates them beside
# openai's released runs; commit each with `python benchmarks/procgen_evaluation_speeds.py` run, whose
# table of test-round speeds the planner reads and a test holds to the committed CSVs). Run it again after a kill: every run resumes from its last checkpoint
# (every 1/20 of its budget), finished runs are skipped. This list is the committed plan: what is
# not exported yet remains (`benchmarks/procgen_runs.sh remaining`).
#
#   benchmarks/procgen_runs.sh             # all of them, in order (one core: run it as one lane)
#   benchmarks/procgen_runs.sh remaining   # the runs not yet exported
#   benchmarks/procgen_runs.sh park        # after stopping the lane: keep its unfinished run for the next session
#
# A run here outlasts a session (2M steps take several), and a session's checkout starts without the
# ignored runs/ folder. So before a session ends, stop the lane (kill -TERM the benchgen process: it
# saves a checkpoint and exits) and park it: its record, store and checkpoints are copied into
# benchmarks/parked/procgen/ (committed, about 8 MB a run); the next `benchmarks/procgen_runs.sh`
# copies a parked run back into runs/ and resumes it.
#
# The CNN runs in the precision that trains it faster on the machine that starts the run
# (benchmarks/faster_precision.py times one training pass in each: bfloat16 on the AMD host, about
# 1.7x float32's speed there, with the heads and losses float32; float32 on the Intel host, where
# bfloat16 is the slower); a run keeps its precision when resumed. coinrun's run started in bfloat16.
# torch threads: benchgen's default (OMP_NUM_THREADS when set, else one core fewer than the process
# may use: one here, beside the Atari lane), the package stepping its games in the same thread; with
# the other lane paused, `OMP_NUM_THREADS=2 benchmarks/procgen_runs.sh` gives the run both cores.
# (coinrun's run recorded torch_threads=1.)
#
# PPO here takes the suite's tuned settings, which start the IMPALA CNN as baselines does
# (extractor_init glorot) and take baselines' PPO2 value loss (value_loss ppo2), both since
# 2026-11-28. The first coinrun run, with stable-baselines3's orthogonal start and value loss, played
# no better than a blind policy (the paper's R_min, 5) through 1M steps; it is kept, parked and never resumed by this script, as
# benchmarks/parked/procgen/ppo_orthogonal_init-coinrun-seed0 (docs/measurements/procgen-diagnosis.md).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${PROCGEN_RUNS:-runs/procgen}
RESULTS=benchmarks/results/procgen
PARKED=benchmarks/parked/procgen
mkdir -p "$OUT" "$RESULTS"
. benchmarks/run_or_resume.sh

every() {  # every STEP BUDGET: the reporting checkpoints STEP, 2 STEP, ..., BUDGET
  seq -s, "$1" "$1" "$2"
}

RUNS="ppo coinrun 2000000
random coinrun 100000
random starpilot 100000
ppo starpilot 1000000"

one() {  # one AGENT GAME STEPS
  local agent=$1 game=$2 steps=$3 dir="$OUT/$1-$2-seed0" csv="$RESULTS/$1-$2-seed0.csv"
  if [ ! -f "$csv" ] && [ ! -e "$dir" ] && [ -f "$PARKED/$1-$2-seed0/run.json" ]; then
    cp -r "$PARKED/$1-$2-seed0" "$dir"  # a run parked by an earlier session: resumed below
  fi
  if [ "$agent" = ppo ]; then
    local precision=recorded  # a run that exists keeps the precision it started with
    [ -f "$csv" ] || [ -f "$dir/run.json" ] || precision=$(python benchmarks/faster_precision.py)
    run_or_resume "$dir" "$csv" procgen ppo --tasks "$game" --seeds 0 --timesteps "$steps" \
      --checkpoints "$(every 250000 "$steps")" --set precision="$precision"
  else
    run_or_resume "$dir" "$csv" procgen random --tasks "$game" --seeds 0 --timesteps "$steps" --num-envs 64 \
      --checkpoints "$(every 50000 "$steps")"
  fi
}

main() {
  case ${1:-all} in
    all) while read -r agent game steps; do one "$agent" "$game" "$steps"; done <<<"$RUNS" ;;
    remaining)
      while read -r agent game steps; do
        [ -f "$RESULTS/$agent-$game-seed0.csv" ] || echo "$agent $game $steps"
      done <<<"$RUNS"
      ;;
    park)
      for dir in "$OUT"/*-seed0; do
        [ -f "$dir/run.json" ] || continue
        name=$(basename "$dir")
        [ -f "$RESULTS/$name.csv" ] && { rm -rf "${PARKED:?}/$name"; continue; }  # finished: exported
        if fuser -s "$dir/results.sqlite" 2>/dev/null; then echo "$name is still running: stop it first" >&2; exit 1; fi
        rm -rf "${PARKED:?}/$name" && mkdir -p "$PARKED/$name"
        cp "$dir/run.json" "$PARKED/$name/"
        # the store as one file (its write-ahead log folded in), then the units' checkpoints
        python -c "import sqlite3,sys; s=sqlite3.connect(sys.argv[1]); d=sqlite3.connect(sys.argv[2]); s.backup(d); d.close()" \
          "$dir/results.sqlite" "$PARKED/$name/results.sqlite"
        cp -r "$dir/units" "$PARKED/$name/"
        echo "parked $name: $(du -sh "$PARKED/$name" | cut -f1)"
      done
      ;;
    *) echo "usage: benchmarks/procgen_runs.sh [all|remaining|park]" >&2; exit 2 ;;
  esac
}

# read whole before it runs (see atari100k_runs.sh)
main "$@"; exit
