#!/usr/bin/env bash
# DrQ(epsilon) on Freeway, the first 12,288 agent steps (six training episodes of 2,048 steps; epsilon
# reaches 0.01 at step 6,600), then 10 evaluation episodes: does the chicken ever cross? The question
# behind it (README, Atari 100K): benchgen's DrQ(epsilon) scored 0 on Freeway in full runs, where
# 73 of Agarwal et al. 2021's 100 runs scored; once no reward has been seen, the untrained
# network's preferred action decides whether the chicken moves up, so the network's layout and
# initialization (network_style: pytorch or dopamine) may decide the outcome.
#
#   benchmarks/freeway_early_runs.sh STYLE SEED...   # e.g. dopamine 0 1 2 3
#
# STYLE: pytorch or dopamine (the network_style), or batch_shift (the default network with the
# augmentation Dopamine ran in 2021: one shift for the whole batch, augmentation=shift_intensity_batch).
#
# Each run's episodes go to benchmarks/results/atari100k/freeway_early/ as it ends; run it again
# after a kill and it resumes (finished runs are skipped). One process per core.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${ATARI100K_RUNS:-runs/atari100k}
RESULTS=benchmarks/results/atari100k/freeway_early
mkdir -p "$OUT" "$RESULTS"
main() {
  local style=$1 seed dir csv setting
  case $style in
    pytorch|dopamine) setting="network_style=$style" ;;
    batch_shift) setting="augmentation=shift_intensity_batch" ;;
    *) echo "style: pytorch, dopamine or batch_shift" >&2; exit 2 ;;
  esac
  shift
  for seed in "$@"; do
    dir="$OUT/drq_eps-freeway-early-$style-seed$seed"
    csv="$RESULTS/drq_eps-$style-seed$seed.csv"
    if [ -f "$csv" ]; then echo "done: $csv"; continue; fi
    if [ -f "$dir/run.json" ]; then
      benchgen resume "$dir" --no-progress
    else
      benchgen run atari_saber dqn --protocol benchmarks/protocols/atari100k_quick_eval.yaml --tasks freeway \
        --seeds "$seed" --frames 49152 --set variant=drq_eps --set "$setting" \
        --set save_replay=true --out "$dir" --no-progress
    fi
    benchgen export "$dir" --output "$csv"
  done
}
main "$@"; exit
