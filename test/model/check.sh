#!/usr/bin/env bash
# Checks the protocol model (test/model/idempotency.pml) exhaustively with SPIN, then each guard's mutation, which
# must fail: a guard earns its place by a counterexample. Needs `spin` and `gcc` (Debian: apt-get install spin gcc).
# Usage: npm run check:model        (about two minutes on two cores, alone; memory under 13 GB)
# MODEL_JOBS (default 2): configurations checked at once, each in a directory of its own.
set -euo pipefail
model="$(cd "$(dirname "$0")" && pwd)/idempotency.pml"
for tool in spin gcc; do
  command -v "$tool" >/dev/null || { echo "check:model needs $tool (Debian: apt-get install spin gcc)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
jobs_at_once=${MODEL_JOBS:-2}

# Checks one configuration in its own directory; writes its line ("errors: N", the states, the first violation)
# to <dir>/line and the error count to <dir>/errors ("incomplete" when the search did not cover every state).
run() {
  local dir=$1 expect=$2 store=$3; shift 3
  mkdir -p "$dir" && cd "$dir"
  spin -a "$@" "$model" >/dev/null
  # COLLAPSE stores each state in about half the memory, for 40% more CPU (measured on the 36-million-state
  # configuration: 63 s and 3.7 GB against 38 s and 6.4 GB): only for the largest, which would need 13 GB without
  # it, beside another configuration and the rest of CI.
  local compression=()
  if [ "$store" = collapse ]; then compression=(-DCOLLAPSE); fi
  gcc -O2 -DSAFETY "${compression[@]}" -w -o pan pan.c
  # -w27 for a search of every state: a hash table of 2^27 slots. The default (2^24) holds the small configurations,
  # but the largest store 36 and 68 million states, whose chains in a table that size doubled their time (measured:
  # 191 s -> 120 s, 266 s -> 140 s). A mutation's search ends at its first counterexample, within a few hundred
  # thousand states: the default, as setting up the large table alone takes it 3 s against 0.4.
  local width=()
  if [ "$expect" = clean ]; then width=(-w27); fi
  ./pan -m100000 "${width[@]}" >out 2>&1 || true
  errors=$(grep -oE 'errors: [0-9]+' out | grep -oE '[0-9]+')
  # Without a violation the search must have covered every state (a counterexample ends it early).
  if [ "$errors" -eq 0 ] && grep -q 'max search depth too small\|Search not completed' out; then
    echo incomplete >errors
    { echo "incomplete search: $*"; cat out; } >line
    return
  fi
  states=$(grep -oE '[0-9.e+]+ states, stored' out | head -1)
  violation=$(grep -m1 -oE 'pan:1: .*' out || true)
  printf '%-58s errors: %s  (%s)  %s\n' "${*:-charge}" "$errors" "$states" "${violation:0:90}" >line
  echo "$errors" >errors
}

# Each configuration: "expect" (clean: no violation; caught: a counterexample), how states are stored (collapse:
# compressed, else plain) and spin's -D options.
configs=(
  # WORKERS=2: two recovery runs overlap (a stalled worker resumes after its locks were freed): 68 million states,
  # about 140 s, 5.5 GB. Largest first: what is left at the end runs beside whatever else frees a core.
  "clean|collapse|-DREFUND -DWORKERS=2" "clean|plain|-DREFUND -DTHIRD -DMAXT=5" "clean|plain|-DTHIRD -DMAXT=5"
  "clean|plain|-DREFUND" "clean|plain|"
  # A capture the processor decides later (Adyen): 17 million states, about 50 s.
  "clean|plain|-DREFUND -DDECIDED_LATER"
  "caught|plain|-DMUT_COMPLETE_UNFENCED"            # never two completions
  "caught|plain|-DMUT_RELEASE_UNFENCED"             # a late holder deletes its successor's claim: a second operation
  "caught|plain|-DMUT_GIVEBACK_UNFENCED -DREFUND"   # the worker gives back a reservation its successor uses
  "caught|plain|-DMUT_RESERVE_UNFENCED -DREFUND"    # a late holder reserves for a key the worker already released
  "caught|plain|-DMUT_TAKEOVER_NOT_SENT"            # a takeover forgets an operation its predecessor sent
  "caught|plain|-DMUT_DEADLINE_PAST_LEASE"          # a holder calls out after the worker concluded "never seen"
  "caught|plain|-DMUT_EXPIRE_UNSETTLED"             # an expired unsettled key becomes a new operation
  "caught|plain|-DMUT_GRACE_NOT_LONGER"             # the worker asks while a call can still arrive
  "caught|plain|-DMUT_REFUSAL_FORGETS_INHERITED"    # a refused call frees a key an earlier holder's call still performs
  "caught|plain|-DREFUND -DDECIDED_LATER -DMUT_EARLY_NEWS_IGNORED"   # a decision ahead of the books is dropped
)
for index in "${!configs[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ]; do wait -n; done
  IFS='|' read -r expect store options <<<"${configs[$index]}"
  # shellcheck disable=SC2086
  (run "$work/$index" "$expect" "$store" $options) &
done
wait

failed=0
echo "--- the protocol: every interleaving, no violation; then each guard removed: a counterexample"
for index in "${!configs[@]}"; do
  cat "$work/$index/line"
  errors=$(cat "$work/$index/errors")
  case "${configs[$index]%%|*}:$errors" in
    *:incomplete) failed=1 ;;
    clean:0 | caught:[1-9]*) ;;
    clean:*) failed=1 ;;
    caught:*) echo "  ^ the model no longer needs this guard, or no longer checks what it protects" >&2; failed=1 ;;
  esac
done

if [ "$failed" -ne 0 ]; then echo "check:model FAILED" >&2; exit 1; fi
echo "check:model passed: no violation in any interleaving; every guard's removal is caught"
