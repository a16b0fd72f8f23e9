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
#   benchmarks/atari100k_runs.sh table      # issue 45's campaign, in its order (below)
#   benchmarks/atari100k_runs.sh remaining  # what the campaign has left, one run a line
#
# The campaign (issue 45: the whole table) is the committed plan of the runs that remain: any
# session continues it with `benchmarks/atari100k_runs.sh table` (one lane; a second lane runs the
# same command: a run one lane holds is skipped by the other, through a lock file per run, so both
# walk the list in its order; `TABLE_ORDER=reverse` walks it from its end). Its order: what the
# issue requires first, DER seed 0 on all 26 games (each with random's evaluation), DER seed 1 on
# all 26, DER seed 2 on issue 26's eight, then DrQ(epsilon) seed 0 on the rest of the 26; then what
# it asks where the machine allows, DER seeds 3 and 4 on the eight.
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

ALL_GAMES="alien amidar assault asterix bank_heist battle_zone boxing breakout chopper_command crazy_climber
  demon_attack freeway frostbite gopher hero jamesbond kangaroo krull kung_fu_master ms_pacman pong private_eye
  qbert road_runner seaquest up_n_down"

table_runs() {  # the campaign's runs in order, one "AGENT GAME SEED" a line
  local g s
  for g in $ALL_GAMES; do echo "der $g 0"; echo "random $g 0"; done
  for g in $ALL_GAMES; do echo "der $g 1"; done
  for g in $DER_GAMES; do echo "der $g 2"; done
  for g in $ALL_GAMES; do echo "drq_eps $g 0"; done
  for s in 3 4; do for g in $DER_GAMES; do echo "der $g $s"; done; done
}

exported() { [ -f "$RESULTS/$1-$2-seed$3.csv" ]; }  # exported() AGENT GAME SEED

table() {
  local order=cat
  [ "${TABLE_ORDER:-}" = reverse ] && order=tac
  table_runs | $order | while read -r agent game seed; do
    exported "$agent" "$game" "$seed" && continue
    # a run another lane holds is left to it (flock: released when that process ends, even killed)
    mkdir -p "$OUT/locks"
    (
      flock -n 9 || { echo "busy elsewhere: $agent $game seed $seed"; exit 0; }
      case $agent in
        der) SEED=$seed one rainbow der "$game" ;;
        drq_eps) SEED=$seed one dqn drq_eps "$game" ;;
        random) SEED=$seed one random random "$game" ;;
      esac
    ) 9>"$OUT/locks/$agent-$game-seed$seed"
  done
}

remaining() { table_runs | while read -r agent game seed; do exported "$agent" "$game" "$seed" || echo "$agent $game $seed"; done; }

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
    table) table ;;
    remaining) remaining ;;
    all) der_lane; drq_lane ;;
    *) echo "lane: der, drq_eps, table or remaining (or none for der then drq_eps)" >&2; exit 2 ;;
  esac
}

# One line, read whole before it runs: bash reads a script as it goes, so a run that lasts hours would
# otherwise execute whatever a `git pull` or an edit left at its old reading position afterwards.
main "$@"; exit
