#!/usr/bin/env bash
# Prepares a fresh machine for scripts/bench_spgemm.sh and scripts/bench_spmm.sh: copies the
# peer anchors (../shared/anchors) to $ANCHORS (default /work/anchors), installs their
# packages (their setup.sh: apt + pip), builds the peer drivers into $ANCHORS/bin and
# generates the benchmark matrices into $MATDIR (default /work/data/matrices; ~660 MB).
# Idempotent. Run it alone: its apt step takes the dpkg lock that .ci/run also needs.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
SRC=${SRC:-$here/../shared/anchors}
ANCHORS=${ANCHORS:-/work/anchors}
MATDIR=${MATDIR:-/work/data/matrices}
[ -d "$ANCHORS" ] || cp -r "$SRC" "$ANCHORS"
(cd "$ANCHORS" && ./setup.sh && make -j2)
mkdir -p "$MATDIR"
python3 "$ANCHORS/gen_matrices.py" "$MATDIR"
echo "peer drivers: $ANCHORS/bin; matrices: $MATDIR"
