#!/usr/bin/env bash
# vaultctl benchmark: bench/run.sh PATH/TO/vaultctl [--smoke] [options]  (see bench/run.py --help)
set -euo pipefail
exec python3 "$(dirname "$0")/run.py" "$@"
