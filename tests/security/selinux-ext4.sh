#!/bin/bash
# vm: --mem 1G --disk lower-a:1G --disk lower-b:512M --disk lower-c:512M
# timeout: 600
# kernels: patched
# selinux.sh's cases with the overlays' lower layers on ext4, every lower
# file tagged with pcdedup and pcdedup enabled: the lower files are served
# from shares, and every expectation is that of selinux.sh (case
# lowers-served-by-shares shows that they were).  See lib-selinux.sh.
set -euo pipefail
. "$(dirname "$0")/lib-selinux.sh"

run_selinux_suite on ext4
