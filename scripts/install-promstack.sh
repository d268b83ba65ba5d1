#!/usr/bin/env bash
# Installs the real Prometheus tools the fleet tests run (tests/test_fleet_*.py): promtool (package
# prometheus), node_exporter (prometheus-node-exporter) and amtool (prometheus-alertmanager), from Debian.
# Idempotent: with all three present it returns at once, without touching apt.
# Services are NOT started (policy-rc.d denies it during the install, and nothing enables them): the tests
# start their own node_exporter on a loopback port, for a bounded time.
set -euo pipefail

need=()
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
{ command -v prometheus-node-exporter >/dev/null 2>&1 || command -v node_exporter >/dev/null 2>&1; } \
  || need+=(prometheus-node-exporter)
command -v amtool >/dev/null 2>&1 || need+=(prometheus-alertmanager)
if [[ ${#need[@]} -eq 0 ]]; then
  exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
  SUDO=sudo
else
  SUDO=
fi
echo "[promstack] installing ${need[*]} (Debian packages; services are not started)" >&2
# policy-rc.d exit 101: invoke-rc.d must not start the daemons these packages ship
policy=/usr/sbin/policy-rc.d
created_policy=0
if [[ ! -e "$policy" ]]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
  $SUDO chmod 0755 "$policy"
  created_policy=1
fi
cleanup() { if [[ $created_policy -eq 1 ]]; then $SUDO rm -f "$policy"; fi; }
trap cleanup EXIT
export DEBIAN_FRONTEND=noninteractive
if ! $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >&2; then
  $SUDO apt-get update -q >&2
  $SUDO apt-get install -y -q --no-install-recommends "${need[@]}" >&2
fi
command -v promtool >/dev/null
command -v prometheus-node-exporter >/dev/null || command -v node_exporter >/dev/null
command -v amtool >/dev/null
