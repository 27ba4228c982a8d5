#!/bin/sh
# Fails if an option the fragment sets did not survive olddefconfig, which
# happens silently when a dependency is missing.
# Usage: kconfig-check.sh <fragment> <.config>
set -eu
bad=0
grep -E '^CONFIG_[A-Z0-9_]+=' "$1" | while IFS= read -r line; do
	grep -qxF "$line" "$2" || { echo "kconfig-check: $line did not stick" >&2; echo x; }
done | grep -q x && bad=1
[ "$bad" = 0 ] || { echo "kconfig-check: fix config/threadlets.config" >&2; exit 1; }
