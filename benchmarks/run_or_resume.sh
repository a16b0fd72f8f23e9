# Sourced by the long-run scripts (atari100k_runs.sh, freeway_early_runs.sh): one run, kept safe
# across kills. Skipped when its exported episodes exist; resumed from its last checkpoint when its
# folder holds a run; otherwise started; exported as soon as it ends, with the processor it ran on
# noted in the CSV folder's machines.csv (record_run_machine.py).
#
#   run_or_resume DIR CSV SUITE AGENT [benchgen run options...]
run_or_resume() {
  local dir=$1 csv=$2
  shift 2
  if [ -f "$csv" ]; then echo "done: $csv"; return; fi
  if [ -f "$dir/run.json" ]; then
    benchgen resume "$dir" --no-progress
  else
    benchgen run "$@" --out "$dir" --no-progress
  fi
  benchgen export "$dir" --output "$csv"
  python "$(dirname "${BASH_SOURCE[0]}")/record_run_machine.py" "$dir" "$csv"  # the processor it ran on
}
