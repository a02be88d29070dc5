#!/bin/bash
# vm: --mem 1G
# timeout: 300
# kernels: patched stock
# SELinux on overlayfs: the copy-up hooks, the overlay and mounter checks,
# and the series' checks of the task against lower-layer labels, with a
# policy that declares the overlayfs_lower_checks capability.  On the stock
# kernel the cases of the new checks are expected failures.  See
# lib-selinux.sh.
set -euo pipefail
. "$(dirname "$0")/lib-selinux.sh"

case ${PCDEDUP_KERNEL_VARIANT:-patched} in
stock) run_selinux_suite stock ;;
*) run_selinux_suite on ;;
esac
