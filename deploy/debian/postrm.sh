#!/bin/sh
# purge: the data dir and the user go too (remove keeps them).
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/edgectl
	if getent passwd edgectl >/dev/null; then
		deluser --system --quiet edgectl >/dev/null 2>&1 || true
	fi
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
