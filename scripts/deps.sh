#!/bin/bash
# Install the Debian packages in scripts/deps.txt that are missing.
set -euo pipefail
mapfile -t pkgs < <(grep -vE '^[[:space:]]*(#|$)' "$(dirname "$0")/deps.txt")
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -gt 0 ] || exit 0
echo "deps: installing ${missing[*]}"
if [ "$(id -u)" != 0 ]; then
	echo "deps: need root to install packages" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
