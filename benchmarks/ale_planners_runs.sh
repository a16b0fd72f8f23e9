#!/usr/bin/env bash
# Small-budget reproduction runs of the ALE papers' planners and the Brute (issue 30 item 5), one
# at a time, niced; each run's episodes are exported to benchmarks/results/ale_agents/ as soon as
# it ends. The budgets are far below the papers' and are stated in
# benchmarks/results/ale_agents/README.md beside the published rows:
#
# * BrFS and UCT (Bellemare et al. 2013, section 3.2, appendix C: 133,000 frames per action; 500
#   simulations of up to 300 frames per action; 10 episodes of up to 18,000 frames): here BrFS
#   simulates 800 frames per action, UCT 8 simulations of up to 100 frames, over 2 evaluation
#   episodes cut at 2,000 frames (benchmarks/ale_agents/ale2013_planning_small.yaml);
# * the ALE paper's Random, a random action every frame (frame_random), and benchgen's random,
#   one every agent step of 5 frames: 10 evaluation episodes instead of 500
#   (benchmarks/ale_agents/ale2013_small.yaml);
# * the Brute (Machado et al. 2018, Table 1: 50M frames, the last 100 training episodes, 24
#   trials): here 1M frames, one trial, deterministic (sticky probability 0) and sticky (0.25).
#
#   benchmarks/ale_planners_runs.sh               # everything below, in order
#   benchmarks/ale_planners_runs.sh uct asterix
#   benchmarks/ale_planners_runs.sh brute sticky asterix
#   benchmarks/ale_planners_runs.sh random frame_random asterix
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${ALE_AGENTS_RUNS:-/tmp/ale_agents_runs}
RESULTS=benchmarks/results/ale_agents
BRUTE_FRAMES=${BRUTE_FRAMES:-1000000}
mkdir -p "$OUT" "$RESULTS"

plan() {  # plan brfs|uct GAME: one planned training step, then 2 evaluation episodes
  local agent=$1 game=$2 dir="$OUT/$1-$2-seed0" csv="$RESULTS/$1-$2-seed0.csv" budget
  if [ "$agent" = uct ]; then
    budget=(--set simulations_per_action=8 --set max_depth_frames=100)
  else
    budget=(--set max_frames_per_action=800)
  fi
  if [ -f "$csv" ]; then echo "done: $csv"; return; fi
  rm -rf "$dir"
  nice -n 10 benchgen run atari_saber "$agent" "${budget[@]}" \
    --protocol benchmarks/ale_agents/ale2013_planning_small.yaml --tasks "$game" --seeds 0 --frames 5 \
    --out "$dir" --no-progress
  benchgen export "$dir" --output "$csv"
}

random_runs() {  # random_runs frame_random|random GAME: the ALE paper's Random (every frame) or benchgen's (every step)
  local agent=$1 game=$2 dir="$OUT/$1-$2-seed0" csv="$RESULTS/$1-$2-seed0.csv"
  if [ -f "$csv" ]; then echo "done: $csv"; return; fi
  rm -rf "$dir"
  nice -n 10 benchgen run atari_saber "$agent" --protocol benchmarks/ale_agents/ale2013_small.yaml \
    --tasks "$game" --seeds 0 --frames 5 --out "$dir" --no-progress
  benchgen export "$dir" --output "$csv"
}

brute() {  # brute deterministic|sticky GAME: Machado et al. 2018's protocol, with or without sticky actions
  local kind=$1 game=$2 dir="$OUT/brute-$1-$2-seed0" csv="$RESULTS/brute-$1-$2-seed0.csv"
  local protocol=machado2018
  if [ "$kind" = deterministic ]; then protocol=benchmarks/ale_agents/machado2018_deterministic.yaml; fi
  if [ -f "$csv" ]; then echo "done: $csv"; return; fi
  rm -rf "$dir"
  nice -n 10 benchgen run atari_saber brute --protocol "$protocol" --tasks "$game" --seeds 0 \
    --frames "$BRUTE_FRAMES" --out "$dir" --no-progress
  benchgen export "$dir" --output "$csv"
}

case $# in
  2) plan "$1" "$2"; exit ;;
  3) if [ "$1" = random ]; then random_runs "$2" "$3"; else "$1" "$2" "$3"; fi; exit ;;
esac
for game in asterix space_invaders; do
  plan brfs "$game"
  plan uct "$game"
done
for game in asterix space_invaders; do
  random_runs frame_random "$game"
  random_runs random "$game"
done
for game in asterix space_invaders; do
  brute deterministic "$game"
  brute sticky "$game"
done
