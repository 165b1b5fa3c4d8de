#!/usr/bin/env bash
# Clone main into a temporary directory and run CI there N times in a row (default 10), as a clean
# checkout runs it; stop at the first red run and print its failing tests.
#   bash scripts/repeat-ci.sh [N] [REPO]     REPO: the repository to clone (default: this checkout's)
# Each run's output is kept in the clone's directory (printed at the end); the clone is left for a look.
set -uo pipefail
runs="${1:-10}"
repo="${2:-$(git -C "$(dirname "$0")/.." rev-parse --path-format=absolute --git-common-dir)}"
work="$(mktemp -d -t gpugauge-repeat-ci-XXXXXX)"
git clone --quiet --branch main "$repo" "$work/gpugauge" || { echo "cannot clone main from $repo" >&2; exit 2; }
# The suite reads ../shared (the contract checker, the SkyPilot rows) where the checkout has one beside it.
shared="$(cd "$(dirname "$0")/../.." && pwd)/shared"
if [ -d "$shared" ]; then ln -s "$shared" "$work/shared"; fi
cd "$work/gpugauge"
echo "clean clone of main at $(git rev-parse --short HEAD) in $work/gpugauge; $runs runs"
for i in $(seq 1 "$runs"); do
    log="$work/run-$i.log"
    started=$(date +%s)
    CI=true bash .ci/run >"$log" 2>&1
    status=$?
    echo "run $i/$runs: exit $status in $(( $(date +%s) - started )) s (log: $log)"
    if [ "$status" -ne 0 ]; then
        echo "== failing tests of run $i:"
        grep -E '^(FAILED|ERROR) ' "$log" || tail -n 40 "$log"
        exit 1
    fi
done
echo "$runs runs in a row passed from a clean clone of main ($(git rev-parse --short HEAD))"
