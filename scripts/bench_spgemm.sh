#!/usr/bin/env bash
# SpGEMM benchmark: libspgemm against its peers, in one run on this machine.
#   scripts/bench_spgemm.sh [MATDIR] [OUT.jsonl]
# MATDIR (default /work/data/matrices) holds the .mtx files and products.txt
# (label <TAB> A <TAB> B, B = "A" for A*A). Appends JSON lines (anchors/SCHEMA.md) to OUT
# (default perf-results/spgemm-<date>.jsonl): one "meta" line, then per product, with
# peers and ours interleaved so machine noise hits both:
#   MKL sp2m, sp2m_noval, sp2m_full, spmm   (MKL_NUM_THREADS=$THREADS, one process each)
#   GraphBLAS auto, gustavson, hash          (OMP_NUM_THREADS=$THREADS, one process)
#   KokkosKernels kk, kkmem, kkdense, kklp   (serial: Debian's Kokkos has only Serial)
#   libspgemm auto at $THREADS and 1 thread, sorted and unsorted (one process each, so
#   peak_rss_mb is auto's alone), and every other algorithm at $THREADS, sorted and
#   unsorted (one process per setting).
# Every line gets "trial", "rc", "call_wall_s" and "foreign_cpu_s" (CPU seconds other
# processes used on the machine during the call: noise indicator).
# Environment knobs:
#   REPS (timed repetitions after 1 warm-up, default 5), HEAVY_RE (regex of labels run
#   with HEAVY_REPS, default 'rmat'), HEAVY_REPS (default 2), ONLY (regex on labels),
#   THREADS (default 2), TRIALS (default 1), HEAVY_TRIALS (the products matching
#   HEAVY_RE run in trials 1..HEAVY_TRIALS only, default all: one slow product need not
#   triple a three-trial run), TMO (timeout per call, s, default 900),
#   ANCHORS (peer drivers' folder, default /work/anchors; drivers in $ANCHORS/bin),
#   PEERS (default "mkl graphblas kk"; empty = only ours), OURS=0 (peers only),
#   MKL_ALGS (MKL stages timed, default sp2m,sp2m_noval,sp2m_full,spmm),
#   OUR_ALGS (default: all non-auto algorithms spgemm-bench knows; "none": auto only), VALIDATE (0|1,
#   default 1 = the library's default), QUIET_WAIT (seconds to wait before each call for
#   the machine to be < 15% busy, default 0 = off), NO_BUILD=1 (skip cargo build),
#   OUTPUT (caller|owned, default caller: fresh caller arrays for every product, as MKL's
#   driver gets a fresh C from MKL; owned: C is a library-owned result whose arrays come
#   from the handle's cache of destroyed results, as in a loop of spgemm_multiply calls;
#   see spgemm-bench --output), REPORT (a path: after the run, write the report of OUT
#   there with scripts/perf_report.py, so one run of this script makes the whole
#   docs/PERFORMANCE.md), REPORT_ARGS (more arguments for perf_report.py, e.g.
#   "--baseline OLD.jsonl"; the title and a note go in REPORT_TITLE and REPORT_NOTE).
set -uo pipefail
HERE=$(cd "$(dirname "$0")/.." && pwd)
MATDIR=${1:-/work/data/matrices}
OUT=${2:-$HERE/perf-results/spgemm-$(date -u +%Y%m%dT%H%M%SZ).jsonl}
REPS=${REPS:-5}
HEAVY_RE=${HEAVY_RE:-rmat}
HEAVY_REPS=${HEAVY_REPS:-2}
ONLY=${ONLY:-.}
THREADS=${THREADS:-2}
TRIALS=${TRIALS:-1}
HEAVY_TRIALS=${HEAVY_TRIALS:-$TRIALS}
REPORT=${REPORT:-}
REPORT_ARGS=${REPORT_ARGS:-}
REPORT_TITLE=${REPORT_TITLE:-}
REPORT_NOTE=${REPORT_NOTE:-}
TMO=${TMO:-900}
ANCHORS=${ANCHORS:-/work/anchors}
PEERS=${PEERS-mkl graphblas kk}
MKL_ALGS=${MKL_ALGS:-sp2m,sp2m_noval,sp2m_full,spmm}
OURS=${OURS:-1}
VALIDATE=${VALIDATE:-1}
QUIET_WAIT=${QUIET_WAIT:-0}
OUTPUT=${OUTPUT:-caller}
BENCH=$HERE/target/release/spgemm-bench

die() { echo "bench_spgemm.sh: $*" >&2; exit 1; }

[ -f "$MATDIR/products.txt" ] || die "no products.txt in $MATDIR"
declare -A DRIVER=([mkl]=mkl_spgemm [graphblas]=graphblas_spgemm [kk]=kk_spgemm)
for p in $PEERS; do
  [ -n "${DRIVER[$p]:-}" ] || die "unknown peer '$p' in PEERS (known: ${!DRIVER[*]})"
  [ -x "$ANCHORS/bin/${DRIVER[$p]}" ] || die "peer driver $ANCHORS/bin/${DRIVER[$p]} is missing (build it: make -C $ANCHORS)"
done
if [ "$OURS" = 1 ]; then
  if [ "${NO_BUILD:-0}" != 1 ]; then
    (cd "$HERE" && cargo build --release --bin spgemm-bench) >&2 || die "cargo build failed"
  fi
  [ -x "$BENCH" ] || die "$BENCH is missing (cargo build --release --bin spgemm-bench)"
  if [ -z "${OUR_ALGS:-}" ]; then
    # All algorithms the library lists, except auto (run on its own for its peak RSS).
    OUR_ALGS=$("$BENCH" list-algs | grep -v '^auto$' | paste -sd, -)
  fi
  [ "$OUR_ALGS" = none ] && OUR_ALGS=
fi
mkdir -p "$(dirname "$OUT")"
LOG=${OUT%.jsonl}.log

NCPU=$(nproc)
HZ=$(getconf CLK_TCK)
busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8+$9}' /proc/stat; }
wait_quiet() {
  local n=0 b0 b1
  while [ "$n" -lt $((2 * QUIET_WAIT)) ]; do
    b0=$(busy_jiffies); sleep 0.5; b1=$(busy_jiffies)
    [ $(( (b1 - b0) * 200 / (HZ * NCPU) )) -lt 15 ] && break
    n=$((n + 1))
  done
}

json_escape() { printf '%s' "$1" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read()))'; }

# meta line: what ran where
CPU=$(awk -F: '/model name/{sub(/^ +/, "", $2); print $2; exit}' /proc/cpuinfo)
GIT=$(cd "$HERE" && git rev-parse --short HEAD 2>/dev/null)$(cd "$HERE" && git diff --quiet 2>/dev/null || echo "+dirty")
printf '{"bench":"meta","date":"%s","cmd":%s,"env":%s,"nproc":%s,"cpu":%s,"mem_gib":%s,"git":"%s","matdir":%s}\n' \
  "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
  "$(json_escape "scripts/bench_spgemm.sh $MATDIR $OUT")" \
  "$(json_escape "REPS=$REPS HEAVY_REPS=$HEAVY_REPS HEAVY_RE=$HEAVY_RE THREADS=$THREADS TRIALS=$TRIALS HEAVY_TRIALS=$HEAVY_TRIALS ONLY=$ONLY VALIDATE=$VALIDATE OUTPUT=$OUTPUT PEERS=$PEERS MKL_ALGS=$MKL_ALGS")" \
  "$NCPU" "$(json_escape "$CPU")" "$(awk '/MemTotal/{printf "%.1f", $2/1048576}' /proc/meminfo)" \
  "$GIT" "$(json_escape "$MATDIR")" >> "$OUT"

TRIAL=0
# call LIB WHAT A B -- env/cmd...: runs one process, appends its JSON lines with tags.
call() {
  local lib=$1 what=$2 a=$3 b=$4; shift 4
  local tmp tfile t0 t1 b0 b1 rc ucpu wall foreign tag
  tmp=$(mktemp); tfile=$(mktemp)
  [ "$QUIET_WAIT" -gt 0 ] && wait_quiet
  b0=$(busy_jiffies); t0=$(date +%s.%N)
  /usr/bin/time -o "$tfile" -f "%U %S" timeout "$TMO" "$@" > "$tmp" 2>> "$LOG"
  rc=$?
  t1=$(date +%s.%N); b1=$(busy_jiffies)
  ucpu=$(awk '/^[0-9.]+ [0-9.]+$/{print $1+$2}' "$tfile" | tail -1)
  wall=$(awk "BEGIN{printf \"%.3f\", $t1 - $t0}")
  foreign=$(awk "BEGIN{f=($b1-$b0)/$HZ - ${ucpu:-0}; if (f<0) f=0; printf \"%.2f\", f}")
  tag=",\"trial\":$TRIAL,\"rc\":$rc,\"call_wall_s\":$wall,\"foreign_cpu_s\":$foreign}"
  if [ ! -s "$tmp" ]; then
    local why="rc=$rc"; [ $rc -eq 124 ] && why="timeout ${TMO}s"
    printf '{"lib":"%s","alg":"%s","A":"%s","B":"%s","error":"%s"%s\n' "$lib" "$what" "$a" "$b" "$why" "$tag" >> "$OUT"
  else
    grep '^{' "$tmp" | sed "s/}\$/$tag/" >> "$OUT"
  fi
  printf '[bench] %-10s %-28s %-15s %-15s rc=%s %7.1fs foreign_cpu=%ss\n' "$lib" "$what" "$a" "$b" "$rc" "$wall" "$foreign" | tee -a "$LOG" >&2
  [ $rc -ne 0 ] && echo "[bench]   FAILED (rc=$rc): see $LOG" >&2
  rm -f "$tmp" "$tfile"
}

for trial in $(seq 1 "$TRIALS"); do
  TRIAL=$trial
  while IFS=$'\t' read -r label A B; do
    [ -z "$label" ] && continue
    [[ "$label" =~ $ONLY ]] || continue
    pa="$MATDIR/$A.mtx"
    if [ "$B" = "A" ]; then pb=A; bn=$A; else pb="$MATDIR/$B.mtx"; bn=$B; fi
    reps=$REPS
    if [[ "$label" =~ $HEAVY_RE ]]; then
      [ "$trial" -le "$HEAVY_TRIALS" ] || continue
      reps=$HEAVY_REPS
    fi
    echo "== trial $trial: $label reps=$reps" | tee -a "$LOG" >&2
    for p in $PEERS; do
      case $p in
        mkl)
          for alg in ${MKL_ALGS//,/ }; do
            call mkl "$alg" "$A" "$bn" env MKL_NUM_THREADS="$THREADS" OMP_NUM_THREADS="$THREADS" ANCHOR_ALGS=$alg \
              "$ANCHORS/bin/mkl_spgemm" "$pa" "$pb" "$reps"
          done ;;
        graphblas)
          call graphblas "auto,gustavson,hash" "$A" "$bn" env OMP_NUM_THREADS="$THREADS" ANCHOR_ALGS= \
            "$ANCHORS/bin/graphblas_spgemm" "$pa" "$pb" "$reps" ;;
        kk)
          call kokkoskernels "kk,kkmem,kkdense,kklp" "$A" "$bn" env OMP_NUM_THREADS=1 ANCHOR_ALGS=kk,kkmem,kkdense,kklp \
            "$ANCHORS/bin/kk_spgemm" "$pa" "$pb" "$reps" ;;
      esac
    done
    if [ "$OURS" = 1 ]; then
      for sorted in 1 0; do
        for t in $(printf '%s\n' "$THREADS" 1 | awk '!seen[$0]++'); do
          call libspgemm "auto T=$t sorted=$sorted" "$A" "$bn" "$BENCH" spgemm --a "$pa" --b "$pb" --alg auto \
            --threads "$t" --reps "$reps" --sorted "$sorted" --validate "$VALIDATE" --output "$OUTPUT"
        done
        if [ -n "$OUR_ALGS" ]; then
          call libspgemm "$OUR_ALGS T=$THREADS sorted=$sorted" "$A" "$bn" "$BENCH" spgemm --a "$pa" --b "$pb" --alg "$OUR_ALGS" \
            --threads "$THREADS" --reps "$reps" --sorted "$sorted" --validate "$VALIDATE" --output "$OUTPUT"
        fi
      done
    fi
  done < "$MATDIR/products.txt"
done
echo "[bench] wrote $OUT (log $LOG)" >&2
if [ -n "$REPORT" ]; then
  args=("$OUT")
  # Word splitting of REPORT_ARGS is intended (several options).
  # shellcheck disable=SC2206
  args+=($REPORT_ARGS)
  [ -n "$REPORT_TITLE" ] && args+=(--title "$REPORT_TITLE")
  [ -n "$REPORT_NOTE" ] && args+=(--note "$REPORT_NOTE")
  python3 "$HERE/scripts/perf_report.py" "${args[@]}" > "$REPORT.tmp" && mv "$REPORT.tmp" "$REPORT" \
    || die "perf_report.py failed (report left in $REPORT.tmp)"
  echo "[bench] wrote $REPORT" >&2
fi
