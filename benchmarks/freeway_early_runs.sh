#!/usr/bin/env bash
# DrQ(epsilon) on Freeway, the first 12,288 agent steps (six training episodes of 2,048 steps; epsilon
# reaches 0.01 at step 6,600), then 10 evaluation episodes: does the chicken ever cross? The question
# behind it (docs/measurements/atari100k.md): benchgen's DrQ(epsilon) scored 0 on Freeway in full runs, where
# 73 of Agarwal et al. 2021's 100 runs scored; once no reward has been seen, the untrained
# network's preferred action decides whether the chicken moves up, so the network's layout and
# initialization (network_style: pytorch or dopamine) may decide the outcome.
#
#   benchmarks/freeway_early_runs.sh STYLE SEED...   # e.g. dopamine 0 1 2 3
#
# STYLE, each a difference between benchgen's DrQ(epsilon) and Dopamine's of 2021 (labs/atari_100k,
# which Agarwal et al. ran), alone or together:
#   pytorch        benchgen's default (network_style=pytorch, per-image shift, no no-op starts)
#   dopamine       Dopamine's network (network_style=dopamine)
#   batch_shift    Dopamine's 2021 augmentation: one shift for the whole batch
#                  (augmentation=shift_intensity_batch)
#   noop           Dopamine's runner of August 2021: 0-29 no-op frames at every episode's start
#                  (protocols/atari100k_quick_eval_noop.yaml)
#   dopamine_2021  all three of Dopamine's at once
#
# Each run's episodes go to benchmarks/results/atari100k/freeway_early/ as it ends; run it again
# after a kill and it resumes (finished runs are skipped). One process per core.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${ATARI100K_RUNS:-runs/atari100k}
RESULTS=benchmarks/results/atari100k/freeway_early
PROTOCOLS=benchmarks/protocols
mkdir -p "$OUT" "$RESULTS"
. benchmarks/run_or_resume.sh

main() {
  local style=$1 seed protocol=$PROTOCOLS/atari100k_quick_eval.yaml
  local -a settings
  case $style in
    pytorch|dopamine) settings=(--set "network_style=$style") ;;
    batch_shift) settings=(--set augmentation=shift_intensity_batch) ;;
    noop) settings=(); protocol=$PROTOCOLS/atari100k_quick_eval_noop.yaml ;;
    dopamine_2021)
      settings=(--set network_style=dopamine --set augmentation=shift_intensity_batch)
      protocol=$PROTOCOLS/atari100k_quick_eval_noop.yaml ;;
    *) echo "style: pytorch, dopamine, batch_shift, noop or dopamine_2021" >&2; exit 2 ;;
  esac
  shift
  for seed in "$@"; do
    run_or_resume "$OUT/drq_eps-freeway-early-$style-seed$seed" "$RESULTS/drq_eps-$style-seed$seed.csv" \
      atari_saber dqn --protocol "$protocol" --tasks freeway --seeds "$seed" --frames 49152 \
      --set variant=drq_eps "${settings[@]}" --set save_replay=true
  done
}
main "$@"; exit
