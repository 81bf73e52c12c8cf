#!/usr/bin/env bash
# The retry story against a running server, with curl: the client times out on a slow charge, retries
# with the same Idempotency-Key, gets the one charge back, and an edited amount under that key is refused;
# the key finds the charge again; then an authorization is captured once, whatever the retries.
#
#   npm start                      # in another terminal
#   npm run smoke                  # the server at PORT (3000), or: npm run smoke -- http://host:port
#
# API_KEY may be given; otherwise a fresh account is created with `npm run account:create`, which reaches
# the same database as a server started with the same environment.
set -euo pipefail

BASE_URL=${1:-${BASE_URL:-http://127.0.0.1:${PORT:-3000}}}
cd "$(dirname "$0")/.."
if ! curl -fsS --max-time 5 "$BASE_URL/readyz" >/dev/null 2>&1; then
  echo "smoke: no ready server answers at $BASE_URL; start one with npm start (or pass its URL: npm run smoke -- URL)" >&2
  exit 1
fi
json() { node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];console.log(v??"")})' "$1"; }
API_KEY=${API_KEY:-$(npm run --silent account:create -- --name "smoke test" | json api_key)}
KEY="smoke-$(date +%s)-$RANDOM"
BODY="{\"amount_cents\":2500,\"currency\":\"usd\",\"source\":\"pm_card_slow\",\"metadata\":{\"smoke_key\":\"$KEY\"}}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0

post() { # post NAME BODY [curl args...]: POST /v1/charges, see post_to
  local name=$1 body=$2
  shift 2
  post_to "$name" /v1/charges "$body" "$@"
}
post_to() { # post_to NAME PATH BODY [curl args...]: writes $TMP/NAME.{headers,body}, prints the status (000 on timeout)
  local name=$1 path=$2 body=$3
  shift 3
  curl -sS -o "$TMP/$name.body" -D "$TMP/$name.headers" -w '%{http_code}' -X POST "$BASE_URL$path" \
    -H "Authorization: Bearer $API_KEY" -H 'Content-Type: application/json' -d "$body" "$@" 2>/dev/null || true
}
header() { grep -i "^$2:" "$TMP/$1.headers" | cut -d' ' -f2- | tr -d '\r' || true; }
check() { # check DESCRIPTION ACTUAL EXPECTED
  if [ "$2" = "$3" ]; then echo "ok    $1"; else echo "FAIL  $1: got '$2', want '$3'"; failures=$((failures + 1)); fi
}

status=$(post timeout "$BODY" -H "Idempotency-Key: $KEY" --max-time 1)
check "a slow charge times out on the client" "$status" "000"

status=$(post early "$BODY" -H "Idempotency-Key: $KEY")
if [ "$status" = 409 ]; then
  check "a retry while it still runs is 409 with Retry-After" "$(header early retry-after)" "1"
  sleep 2
  status=$(post early "$BODY" -H "Idempotency-Key: $KEY")
fi
check "the retry gets the charge that the timed-out request made" "$status" "201"
check "marked as a replay" "$(header early idempotent-replayed)" "true"

status=$(post again "$BODY" -H "Idempotency-Key: $KEY")
check "another retry replays the same bytes" "$(cmp -s "$TMP/early.body" "$TMP/again.body" && echo same || echo different)" "same"

status=$(post edited "${BODY/2500/9900}" -H "Idempotency-Key: $KEY")
check "the same key with an edited amount is 422" "$status" "422"
check "as a problem+json" "$(header edited content-type)" "application/problem+json; charset=utf-8"

status=$(post nokey "$BODY")
check "no Idempotency-Key is 400" "$status" "400"

count=$(curl -sS "$BASE_URL/v1/charges?limit=100" -H "Authorization: Bearer $API_KEY" |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data.filter(c=>c.metadata.smoke_key===process.argv[1]).length))' "$KEY")
check "the customer was charged once ($(json id < "$TMP/early.body"))" "$count" "1"

found=$(curl -sS "$BASE_URL/v1/charges?idempotency_key=$KEY" -H "Authorization: Bearer $API_KEY" |
  node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).data.map(c=>c.id).join(",")))')
check "the key finds the charge it created" "$found" "$(json id < "$TMP/early.body")"

status=$(post authorized '{"amount_cents":5000,"currency":"usd","source":"pm_card_visa","capture":false}' -H "Idempotency-Key: $KEY-auth")
check "capture: false authorizes only" "$status/$(json status < "$TMP/authorized.body")" "201/requires_capture"
CHARGE=$(json id < "$TMP/authorized.body")
status=$(post_to captured "/v1/charges/$CHARGE/capture" '{"amount_cents":4000}' -H "Idempotency-Key: $KEY-capture")
check "a partial capture takes 4000 of the 5000 held" "$status/$(json amount_captured_cents < "$TMP/captured.body")" "200/4000"
status=$(post_to recaptured "/v1/charges/$CHARGE/capture" '{"amount_cents":4000}' -H "Idempotency-Key: $KEY-capture")
check "the capture's retry replays the same bytes" "$(cmp -s "$TMP/captured.body" "$TMP/recaptured.body" && echo same || echo different)" "same"
status=$(post_to second "/v1/charges/$CHARGE/capture" '{}' -H "Idempotency-Key: $KEY-capture-2")
check "a second capture with a new key is 409, not a second capture" "$status/$(json type < "$TMP/second.body" | sed 's#.*/##')" "409/charge-not-capturable"

[ "$failures" = 0 ] && echo "smoke: all checks passed" || { echo "smoke: $failures check(s) failed"; exit 1; }
