#!/usr/bin/env bash
# Install gpugauge and serve the API on http://127.0.0.1:8000 (embedded queue unless REDIS_URL is set).
source "$(dirname "${BASH_SOURCE[0]}")/_venv.sh" ""  # no extras; an explicit argument, else `source` hands it serve.sh's own arguments
exec .venv/bin/gpugauge serve --host "${HOST:-127.0.0.1}" --port "${PORT:-8000}" "$@"
