#!/bin/bash
# vm: --mem 1G
# timeout: 300
# kernels: patched
# The series' kernel with a policy that does not declare the
# overlayfs_lower_checks capability: the stock, mounter-only behaviour
# (cases switch-off-*), the rest is unchanged.  See lib-selinux.sh.
set -euo pipefail
. "$(dirname "$0")/lib-selinux.sh"

run_selinux_suite off
