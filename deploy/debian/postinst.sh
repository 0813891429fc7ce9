#!/bin/sh
# edgectl's package: the system user, the data dir, the units.
set -e
if [ "$1" = configure ]; then
	if ! getent passwd edgectl >/dev/null; then
		adduser --system --group --home /var/lib/edgectl --no-create-home --quiet edgectl
	fi
	install -d -m 0750 -o edgectl -g edgectl /var/lib/edgectl /var/lib/edgectl/backups
	chown root:edgectl /etc/edgectl /etc/edgectl/config.json
	chmod 0750 /etc/edgectl
	chmod 0640 /etc/edgectl/config.json
	if [ -d /run/systemd/system ]; then
		systemctl daemon-reload >/dev/null || true
		systemctl enable edgectl-backup.timer >/dev/null || true
	fi
fi
exit 0
