#!/bin/bash
# The real-image pairs on the host: bench/images.py's layer and file list,
# bench.py's copy of them, bench/report_pairs.py's ceiling, table, targets
# and picture (tests/host/bench_pairs.py, which prints KTAP).
set -euo pipefail
exec python3 "$(dirname "$0")/bench_pairs.py"
