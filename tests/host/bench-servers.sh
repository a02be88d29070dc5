#!/bin/bash
# The bench's server clients (bench/guest/servers.py) against fake servers:
# a wrong row, an error or a failed login raises (tests/host/bench_servers.py,
# which prints KTAP).
set -euo pipefail
exec python3 "$(dirname "$0")/bench_servers.py"
