#!/bin/bash
# vm: --mem 1G --append selinux_overlay_caller=0
# timeout: 300
# kernels: patched
# The series' kernel booted with selinux_overlay_caller=0: the stock,
# mounter-only behaviour returns (cases switch-off-*), the rest is unchanged.
# See lib-selinux.sh.
set -euo pipefail
. "$(dirname "$0")/lib-selinux.sh"

run_selinux_suite off
