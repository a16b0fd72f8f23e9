#!/usr/bin/env bash
# The environment baselines_round.py runs in (not benchgen's: TensorFlow 2.15 needs numpy < 2):
#   benchmarks/procgen_baselines_replay/setup.sh [VENV] [BASELINES_ZIP_OR_FOLDER]
# VENV defaults to runs/baselines-venv (runs/ is ignored); baselines @ 9ee399f, the commit
# train-procgen's README installs, from GitHub unless a local copy (zip or folder) is given.
set -euo pipefail
venv=${1:-runs/baselines-venv}
src=${2:-https://github.com/openai/baselines/archive/9ee399f5b20cd70ac0a871927a6cf043b478193f.zip}
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q "tensorflow-cpu==2.15.1" "numpy<2" "procgen-mirror==0.10.7" "gym3==0.3.3" \
  "gym==0.15.7" cloudpickle joblib
# --no-deps: baselines' setup.py pins packages for Python 3.7; what it imports is installed above
"$venv/bin/python" -m pip install -q --no-deps "$src"
echo "now: $venv/bin/python benchmarks/procgen_baselines_replay/baselines_round.py runs/baselines_round.npz"
