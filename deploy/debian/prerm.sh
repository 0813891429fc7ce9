#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	systemctl stop edgectl-backup.timer edgectl.socket edgectl.service >/dev/null 2>&1 || true
	systemctl disable edgectl-backup.timer edgectl.socket edgectl.service >/dev/null 2>&1 || true
fi
exit 0
