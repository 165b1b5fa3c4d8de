#!/usr/bin/env bash
# Make sure Debian's chromium is installed for the browser test of the page (tests/test_page_browser.py).
# Idempotent: does nothing when /usr/bin/chromium is there. Installs with apt-get when run as root.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  echo "chromium is missing and this is not root: run 'apt-get install -y chromium' (the browser test will fail)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
command -v chromium
