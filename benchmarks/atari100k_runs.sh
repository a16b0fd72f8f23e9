#!/usr/bin/env bash
# The Atari 100K proof runs (issue 26): Data-Efficient Rainbow on eight games and DrQ(epsilon) on
# four, one seed, one game at a time, and benchgen's random agent's 100 evaluation episodes on
# each game under the same protocol; each run's episodes are exported to
# benchmarks/results/atari100k/ as soon as it ends (benchmarks/atari100k_table.py tabulates them). Run it again after a kill: every run
# resumes from its last checkpoint (the replay memory is saved with it, so a resumed game
# continues exactly), finished games are skipped.
#
#   benchmarks/atari100k_runs.sh            # all of them, in order
#   benchmarks/atari100k_runs.sh der        # one lane: DER's games with random's evaluations
#   benchmarks/atari100k_runs.sh drq_eps    # the other lane: DrQ(epsilon)'s games
#   benchmarks/atari100k_runs.sh der alien  # one agent (der, drq_eps or random), one game
#   SEED=1 benchmarks/atari100k_runs.sh der crazy_climber   # another seed (default 0)
#
# Games beyond the lanes run the same way, one at a time; those run so far (seed 0): der and random
# on road_runner, kung_fu_master and battle_zone, drq_eps on road_runner.
#
# Each run takes one core (the agents' default threads leave the others free), so on a 2-core
# machine the two lanes can run side by side, one process each; never two processes on one lane.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${ATARI100K_RUNS:-runs/atari100k}
SEED=${SEED:-0}
RESULTS=benchmarks/results/atari100k
mkdir -p "$OUT" "$RESULTS"
. benchmarks/run_or_resume.sh

DER_GAMES="crazy_climber freeway hero kangaroo alien amidar frostbite ms_pacman"
DRQ_GAMES="crazy_climber freeway hero ms_pacman"

one() {  # one() AGENT VARIANT GAME
  local agent=$1 variant=$2 game=$3 dir="$OUT/$2-$3-seed$SEED"
  local csv="$RESULTS/$2-$3-seed$SEED.csv"
  if [ "$agent" = random ]; then  # its training is not the point: a token budget, then the 100 episodes
    run_or_resume "$dir" "$csv" atari_saber random --protocol atari100k --tasks "$game" --seeds "$SEED" --frames 4000
  else
    run_or_resume "$dir" "$csv" atari_saber "$agent" --protocol atari100k --tasks "$game" --seeds "$SEED" \
      --set variant="$variant" --set save_replay=true --checkpoints 400000
  fi
}

der_lane() { for g in $DER_GAMES; do one rainbow der "$g"; one random random "$g"; done; }
drq_lane() { for g in $DRQ_GAMES; do one dqn drq_eps "$g"; done; }

main() {
  if [ $# -eq 2 ]; then
    case $1 in
      der) one rainbow der "$2" ;;
      drq_eps) one dqn drq_eps "$2" ;;
      random) one random random "$2" ;;
      *) echo "agent: der, drq_eps or random" >&2; exit 2 ;;
    esac
    return
  fi
  case ${1:-all} in
    der) der_lane ;;
    drq_eps) drq_lane ;;
    all) der_lane; drq_lane ;;
    *) echo "lane: der or drq_eps (or none for both, one after the other)" >&2; exit 2 ;;
  esac
}

# One line, read whole before it runs: bash reads a script as it goes, so a run that lasts hours would
# otherwise execute whatever a `git pull` or an edit left at its old reading position afterwards.
main "$@"; exit
