#!/bin/bash
# bench/report.py and its sections on a small fixture of raw results, and
# bench.py's plan (tests/host/bench_report.py, which prints KTAP).
# BENCH_REPORT_KEEP=DIR: copy the fixture's report there (to look at it).
set -euo pipefail
exec python3 "$(dirname "$0")/bench_report.py"
