#!/usr/bin/env bash
# Checks the protocol model (test/model/idempotency.pml) exhaustively with SPIN, then each guard's mutation, which
# must fail: a guard earns its place by a counterexample. Needs `spin` and `gcc` (Debian: apt-get install spin gcc).
# Usage: npm run check:model        (about three minutes on two cores; memory under 4 GB)
set -euo pipefail
model="$(cd "$(dirname "$0")" && pwd)/idempotency.pml"
for tool in spin gcc; do
  command -v "$tool" >/dev/null || { echo "check:model needs $tool (Debian: apt-get install spin gcc)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# Runs one configuration; prints "errors: N", the states, and the first violation, and returns the error count.
run() {
  spin -a "$@" "$model" >/dev/null
  gcc -O2 -DSAFETY -DCOLLAPSE -w -o pan pan.c
  ./pan -m100000 >out 2>&1 || true
  errors=$(grep -oE 'errors: [0-9]+' out | grep -oE '[0-9]+')
  # Without a violation the search must have covered every state (a counterexample ends it early).
  if [ "$errors" -eq 0 ] && grep -q 'max search depth too small\|Search not completed' out; then echo "incomplete search: $*" >&2; cat out >&2; exit 1; fi
  states=$(grep -oE '[0-9.e+]+ states, stored' out | head -1)
  violation=$(grep -m1 -oE 'pan:1: .*' out || true)
  printf '%-58s errors: %s  (%s)  %s\n' "${*:-charge}" "$errors" "$states" "${violation:0:90}"
  return "$errors"
}

failed=0
echo "--- the protocol: every interleaving, no violation"
# WORKERS=2: two recovery runs overlap (a stalled worker resumes after its locks were freed): about 70 s, 3 GB.
for config in "" "-DREFUND" "-DTHIRD -DMAXT=5" "-DREFUND -DTHIRD -DMAXT=5" "-DREFUND -DWORKERS=2"; do
  # shellcheck disable=SC2086
  run $config || failed=1
done

echo "--- each guard removed: a counterexample"
mutant() {
  local mutation=$1; shift
  # shellcheck disable=SC2068
  if run "-DMUT_$mutation" $@; then echo "  ^ the model no longer needs this guard, or no longer checks what it protects" >&2; failed=1; fi
}
mutant COMPLETE_UNFENCED            # never two completions
mutant RELEASE_UNFENCED             # a late holder deletes its successor's claim: a second operation
mutant GIVEBACK_UNFENCED -DREFUND    # the worker gives back a reservation its successor uses
mutant RESERVE_UNFENCED -DREFUND    # a late holder reserves for a key the worker already released
mutant TAKEOVER_NOT_SENT            # a takeover forgets an operation its predecessor sent
mutant DEADLINE_PAST_LEASE          # a holder calls out after the worker concluded "never seen"
mutant EXPIRE_UNSETTLED             # an expired unsettled key becomes a new operation
mutant GRACE_NOT_LONGER             # the worker asks while a call can still arrive
mutant REFUSAL_FORGETS_INHERITED    # a refused call frees a key an earlier holder's call still performs

if [ "$failed" -ne 0 ]; then echo "check:model FAILED" >&2; exit 1; fi
echo "check:model passed: no violation in any interleaving; every guard's removal is caught"
