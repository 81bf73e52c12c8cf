/*
 * The Idempotency-Key protocol as src/ implements it, for the SPIN model checker (test/model/check.sh runs it).
 *
 * One key row; three requests for it (R1 and its retry R2 with one body, R3 with another); the recovery worker;
 * the reaper; the processor with its ledger keyed by operation id; the network between the service and the
 * processor; a clock. Every process may stall for any time (the clock moves between any two steps), crash at any
 * step (a request simply stops), lose the processor's answer, run past its deadline, or meet a database error.
 * Each SQL statement or transaction is one atomic step. Times are ticks, at the smallest ratios src/config.ts
 * accepts: deadline = lease, processor timeout < grace.
 *
 * Properties, the same sentences as docs/idempotency.md's "Guarantees, and what they rest on":
 *   (a) the processor performs at most one operation per key lifetime (a lifetime ends when a completed key
 *       expires);
 *   (b) a key is never completed twice;
 *   (c) once nothing is in flight, the books equal the processor's ledger: every operation it performed is
 *       recorded once (refunded + pending never falls short of what it refunded), nothing else is, and once the
 *       key is settled nothing is left pending (but an operation the processor decides later, which stays pending
 *       on its charge until its decision is applied);
 *   (d) a replay returns the stored response of an operation of that request;
 *   (e) another body never gets the first body's outcome, nor a processor call;
 *   (f) no expiry removes a key a holder may still call out for.
 * With DECIDED_LATER the processor answers "received" and decides later (Adyen's modifications): the record step
 * leaves the reservation waiting for the decision, the processor decides (performed or refused) at any time, and
 * its news, delivered at any time after, applies the decision once the books wait for it; (c) then reads: the books
 * record what the processor performed and nothing it refused, and a reservation outlives its key only while its
 * decision has not been applied.
 *
 * Step                          Code (src/)
 * claim (insert/read/takeover)  idempotency/claims.ts KeyClaims.claim: claimStatement + takeOver (the read and the
 *                               conditional UPDATE are one compare-and-swap on the token that was read, so one
 *                               atomic step). Concurrent requests' claims share one statement (db/batcher.ts): it
 *                               runs each request's step, one row each, atomically together, which is one of the
 *                               interleavings checked here (the steps back to back). A shared statement that
 *                               stalls stops holding the requests behind it (db/batcher.ts stallAfterMs); for
 *                               its own requests the step lands or not, their answer lost: a crash after the
 *                               step or before it, both checked here
 * reserve (REFUND)              refunds/refunds.ts reserveRefund, charges/settle.ts reserveSettlement, run by
 *                               idempotency/operation.ts HeldOperation.reserve (fenced: holdsClaim ... for share);
 *                               a holder is a request (plugins/idempotency.ts) or a worker task
 *                               (idempotency/keyed-task.ts KeyedTasks.run): the same HeldOperation, the same steps
 * send                          idempotency/operation.ts HeldOperation.callOut (refuses past the deadline, and a
 *                               takeover of an operation older than the processor keeps keys: both the "else"
 *                               branch) and the processor call in routes/charges.ts, routes/refunds.ts
 * network refuse                the processor refuses the call (processor ProcessorRequestError): nothing performed
 *                               for it; operation.callOut then lets the key go, unless the claim was inherited (an
 *                               earlier holder's call may still be performed)
 * network deliver / drop        the processor receives the call, or never does; processor/instrumented.ts gives a
 *                               call up after PROCESSOR_TIMEOUT_MS, and the clock may not pass that while it flies
 * record and complete           operation.complete + completions.ts Completions: the route's writes, then
 *                               store.ts completeKeys (complete_idempotency_keys, db/functions.sql: fenced by the
 *                               token; raises IK409 otherwise, rolling the writes back), one transaction; shared
 *                               with concurrent requests' completions, each work in turn (their inserts gathered,
 *                               one statement per table: db/gathered-inserts.ts; works that only insert go out with
 *                               the keys' completion as one batch, which PostgreSQL runs as one transaction,
 *                               gatherWithoutTransaction), then every key's completion, each fenced by its own
 *                               token; a rollback runs each alone again, so each lands or not on its own: the same
 *                               atomic step
 * letGo: endLease / release     idempotency/operation.ts HeldOperation.letGo: endLease (fenced) when it may be
 *                               downstream (sent, or inherited by a takeover), else releaseClaim (fenced) and the
 *                               Recovery's release (give-back) in the same transaction, only if the delete hit
 * worker claim                  idempotency/abandoned-claims.ts takeOverAbandoned (lease end + grace * 2^attempts);
 *                               runs on several workers may overlap (WORKERS=2): worker/liveness.ts frees the
 *                               locks of a worker silent for WORKER_DEAD_AFTER_SECONDS, which may only be stalled,
 *                               and a live worker's lock on a job it no longer runs (its completion not recorded)
 * worker lookup                 Recovery.lookup (charges/recovery.ts, refunds/recovery.ts)
 * worker record / release       the same fenced completion; releaseClaim then Recovery.release, one transaction
 * worker give-back on failure   idempotency/abandoned-claims.ts giveBack (fenced), attempts + 1
 * reaper                        idempotency/reap-expired-keys.ts: completed keys past expires_at only
 * record, decided later         charges/settle.ts recordDecidedLater: charges/repository.ts awaitDecision (the
 *                               charge waits, its operation still pending on it); refunds/refunds.ts recordRefund:
 *                               refunds/repository.ts awaitRefundDecision (pending, its amount reserved); and the key
 *                               completes
 * decide                        the processor, on its own time (processor/simulated-later-outcomes.ts decide)
 * news                          processor-events/apply.ts applyChange by processor-events/charge-moves.ts chargeMove
 *                               and decideRefund: a decision waits while its operation is reserved and not yet
 *                               waiting, then applies once (captured or refunded and posted, or refused: the
 *                               reservation freed)
 *
 * Guards, each with a mutation that must fail (test/model/check.sh):
 *   MUT_COMPLETE_UNFENCED   completion without the token     MUT_RELEASE_UNFENCED   key release without the token
 *   MUT_GIVEBACK_UNFENCED   give-back without the token      MUT_RESERVE_UNFENCED   reservation without the token
 *   MUT_TAKEOVER_NOT_SENT   a takeover counts as not sent    MUT_DEADLINE_PAST_LEASE deadline longer than the lease
 *   MUT_EXPIRE_UNSETTLED    an expired unsettled key is new  MUT_GRACE_NOT_LONGER   grace not longer than the timeout
 *   MUT_REFUSAL_FORGETS_INHERITED  a refusal frees an inherited claim too
 *   MUT_EARLY_NEWS_IGNORED  (DECIDED_LATER) a decision that comes before the books wait for it is dropped
 */

#define L   2           /* IDEMPOTENCY_LEASE_SECONDS */
#ifdef MUT_DEADLINE_PAST_LEASE
#define D   (L + G)     /* REQUEST_TIMEOUT_MS longer than the lease */
#else
#define D   L           /* REQUEST_TIMEOUT_MS: at most the lease */
#endif
#define P   1           /* PROCESSOR_TIMEOUT_MS */
#ifdef MUT_GRACE_NOT_LONGER
#define G   (P - 1)     /* shorter than the timeout (in ticks a send is strictly before the deadline, so G = P holds) */
#else
#define G   (P + 1)     /* RECOVERY_GRACE_SECONDS: longer than the processor timeout */
#endif
#define LW  2           /* the worker's own lease */
#define TTL 3           /* IDEMPOTENCY_TTL_SECONDS: short, so that expiry happens within the horizon */
#ifndef MAXT
#define MAXT 8          /* the clock's horizon */
#endif
#define MAXFAIL 1       /* worker failures (lookup errors) */
#define NREQ 3
#define MAXOP 6
#define MAXLIFE 4

byte now;

/* The key row (idempotency_keys). */
bool exists; byte fp; byte op; byte token; byte locked_until; bool completed; byte resp_op; byte expires; byte attempts;
byte life;              /* which lifetime of the key this is */

/* Operations: the body they were made for, their lifetime; reservations, processor ledger, books. */
byte nextop = 1; byte nexttoken = 1;
byte opBody[MAXOP]; byte opLife[MAXOP];
bool reserved[MAXOP];   /* a pending refund or capture under the operation id */
bool performed[MAXOP];  /* the processor's ledger */
byte recorded[MAXOP];   /* the books: charges or refunds recorded for the operation */
byte performedInLife[MAXLIFE]; byte completionsInLife[MAXLIFE];
#ifdef DECIDED_LATER
/* performed[] is then what the processor received; it decides later. */
byte decision[MAXOP];   /* 0: not yet; 1: performed; 2: refused */
bool waiting[MAXOP];    /* the books recorded the operation as waiting for its decision (capture_pending) */
bool applied[MAXOP];    /* the decision's news has been applied to the books */
#endif

/* Calls in flight, one slot per request, and whether the processor refused the request's call (nothing performed
   for it). A refusal is assumed to say nothing of other calls of the operation: another may still be performed
   (weaker than Stripe, which refuses the same parameters under the same key alike). */
bool callPending[NREQ + 1]; byte callOp[NREQ + 1]; byte callSentAt[NREQ + 1];
bool callRefused[NREQ + 1];

/* Who may still call out, for (f): a request's operation and deadline while it has not passed its send step. */
byte holdsOp[NREQ + 1]; byte holdsDeadline[NREQ + 1];
byte finished; byte workersBusy;

#define NEWOP(b) op = nextop; nextop++; opBody[op] = b; opLife[op] = life
#define NEWTOKEN token = nexttoken; nexttoken++
#define NOBODYCALLS(x) (!(holdsOp[1] == x && now < holdsDeadline[1]) && !(holdsOp[2] == x && now < holdsDeadline[2]) && !(holdsOp[3] == x && now < holdsDeadline[3]))
#define INFLIGHT(i) (callPending[i] && callSentAt[i] + P <= now)

#define WAKE (locked_until + G * (1 << attempts))
#ifdef REFUND
#define RESERVED(o) reserved[o]
#else
#define RESERVED(o) true
#endif
#ifdef DECIDED_LATER
#define RECORDABLE(o) (reserved[o] && !waiting[o])   /* awaitDecision: the charge still requires_capture */
#define ANSWERED(o) waiting[o]
#else
#define RECORDABLE(o) RESERVED(o)
#define ANSWERED(o) (recorded[o] == 1)
#endif
#ifdef DECIDED_LATER
#define RECORD(o) waiting[o] = 1                        /* the reservation stays, for the decision */
#else
#define RECORD(o) reserved[o] = 0; recorded[o]++
#endif

/* The clock moves at any time, but not past a call's timeout while the call still flies: the assumption that a
   call given up never reaches the processor later (processor/instrumented.ts). Up to a horizon; past it, once
   every request has ended, straight to the moment the worker may step in, so that settling always can happen. */
active proctype Clock() {
end: do
  :: atomic { now < MAXT && !INFLIGHT(1) && !INFLIGHT(2) && !INFLIGHT(3) -> now++ }
  :: atomic { finished == NREQ && exists && !completed && now < WAKE && !callPending[1] && !callPending[2] && !callPending[3] -> now = WAKE }
  od
}

inline deliver(i) {
  if
  :: !performed[callOp[i]] ->
       assert(performedInLife[opLife[callOp[i]]] == 0);          /* (a) */
       performedInLife[opLife[callOp[i]]]++;
       performed[callOp[i]] = 1
  :: else -> skip                                                /* the processor dedupes by operation id */
  fi;
  callPending[i] = 0
}

active proctype Network() {
end: do
  :: atomic { callPending[1] -> deliver(1) }
  :: atomic { callPending[2] -> deliver(2) }
  :: atomic { callPending[3] -> deliver(3) }
  :: atomic { callPending[1] && !performed[callOp[1]] -> callRefused[1] = 1; callPending[1] = 0 }   /* refused */
  :: atomic { callPending[2] && !performed[callOp[2]] -> callRefused[2] = 1; callPending[2] = 0 }   /* refused */
  :: atomic { callPending[3] && !performed[callOp[3]] -> callRefused[3] = 1; callPending[3] = 0 }   /* refused */
  :: atomic { callPending[1] -> callPending[1] = 0 }             /* never arrives */
  :: atomic { callPending[2] -> callPending[2] = 0 }
  :: atomic { callPending[3] -> callPending[3] = 0 }
  od
}

/* A key past its lifetime goes; what it held must be settled and nobody may still call out for it. */
inline expire() {
  assert(completed);                                             /* (f): an unsettled key never expires */
  assert(NOBODYCALLS(op));                                       /* (f) */
  life++
}

proctype Request(byte me; byte body) {
  byte t0, mytok, myop;
  bool inherited, sent;
  t0 = now;
  /* claim */
  atomic {
    if
    :: !exists ->
         exists = 1; fp = body; NEWOP(body); NEWTOKEN; locked_until = now + L; completed = 0; expires = now + TTL;
         attempts = 0; mytok = token; myop = op; inherited = 0
    :: exists && completed && now < expires && fp == body ->
         assert(ANSWERED(resp_op) && opBody[resp_op] == body);   /* (d), (e): the stored response replayed */
         goto done
    :: exists && completed && now < expires && fp != body -> goto done          /* 422 */
    :: exists && completed && now >= expires ->                  /* a new request: new lifetime, new operation */
         expire(); fp = body; NEWOP(body); NEWTOKEN; locked_until = now + L; completed = 0; expires = now + TTL;
         attempts = 0; mytok = token; myop = op; inherited = 0
#ifdef MUT_EXPIRE_UNSETTLED
    :: exists && !completed && now >= expires && locked_until <= now ->
         expire(); fp = body; NEWOP(body); NEWTOKEN; locked_until = now + L; expires = now + TTL;
         attempts = 0; mytok = token; myop = op; inherited = 0
    :: exists && !completed && now < expires && fp != body -> goto done          /* 422 */
    :: exists && !completed && now < expires && fp == body && locked_until > now -> goto done   /* 409 */
    :: exists && !completed && now < expires && fp == body && locked_until <= now ->
#else
    :: exists && !completed && fp != body -> goto done           /* 422, expired or not */
    :: exists && !completed && fp == body && locked_until > now -> goto done    /* 409 */
    :: exists && !completed && fp == body && locked_until <= now ->
#endif
         NEWTOKEN; locked_until = now + L; attempts = 0; mytok = token; myop = op;   /* takeover: same operation */
#ifdef MUT_TAKEOVER_NOT_SENT
         inherited = 0
#else
         inherited = 1
#endif
    :: goto done                                                 /* crash, or a database error */
    fi;
    holdsOp[me] = myop; holdsDeadline[me] = t0 + D
  }
#ifdef REFUND
  /* reserve: one transaction, fenced by the token */
  atomic {
    if
#ifdef MUT_RESERVE_UNFENCED
    :: !recorded[myop] -> reserved[myop] = 1
#else
    :: exists && token == mytok && !recorded[myop] -> reserved[myop] = 1
#endif
    :: goto letgo                                                /* fenced off, a rule refused it, a database error */
    fi
  }
#endif
  /* send: refused past the deadline; from here on the operation may be downstream */
  atomic {
    if
    :: now < t0 + D ->
         assert(opBody[myop] == body);                            /* (e) */
         sent = 1; callPending[me] = 1; callOp[me] = myop; callSentAt[me] = now; holdsOp[me] = 0
    :: else -> holdsOp[me] = 0; goto letgo                       /* past the deadline (a crash here is letGo's skip) */
    fi
  }
  /* the answer: given, or lost (a timeout), once the call has arrived or is given up; a refusal (nothing
     performed, src/processor ProcessorRequestError) lets the key go, unless an earlier holder may have called out */
  if
  :: !callPending[me] && callRefused[me] ->
#ifdef MUT_REFUSAL_FORGETS_INHERITED
       sent = 0; inherited = 0;
#else
       if :: !inherited -> sent = 0 :: else -> skip fi;
#endif
       goto letgo
  :: !callPending[me] && performed[myop] && !callRefused[me] -> skip
  :: !callPending[me] -> goto letgo
  :: goto crash
  fi;
  /* record and complete: one transaction, fenced by the token */
  atomic {
    if
#ifdef MUT_COMPLETE_UNFENCED
    :: exists ->
#else
    :: exists && token == mytok ->
#endif
#ifdef REFUND
         if
         :: RECORDABLE(myop) -> RECORD(myop)
         :: else -> goto letgo                                   /* "no longer pending": rolled back */
         fi;
#else
         recorded[myop]++;
#endif
         assert(completionsInLife[life] == 0);                   /* (b) */
         completionsInLife[life]++;
         completed = 1; resp_op = myop; token = 0;
         if :: expires < now + TTL -> expires = now + TTL :: else -> skip fi;   /* settled late: a full TTL */
         goto done
    :: goto letgo                                                /* fenced off (IK409), or a database error */
    fi
  }
letgo:
  atomic {
    holdsOp[me] = 0;
    if
    :: sent || inherited ->                                      /* endLease */
         if :: exists && token == mytok -> NEWTOKEN; locked_until = now :: else -> skip fi
    :: !sent && !inherited ->                                    /* release, with the give-back */
#ifdef MUT_GIVEBACK_UNFENCED
         reserved[myop] = 0;
#endif
#ifdef MUT_RELEASE_UNFENCED
         if :: exists && op == myop -> exists = 0; reserved[myop] = 0 :: else -> skip fi
#else
         if :: exists && token == mytok -> exists = 0; reserved[myop] = 0 :: else -> skip fi
#endif
    :: skip                                                      /* the statement failed: the lease runs out */
    fi
  }
  goto done;
crash:
  holdsOp[me] = 0;
done:
  /* An ended request is no longer part of the state: forget its locals so that equal states meet. */
  atomic { finished++; t0 = 0; mytok = 0; myop = 0; inherited = 0; sent = 0; holdsDeadline[me] = 0; callRefused[me] = 0 }
}

/* A recovery worker; `limit` bounds its claims (0: no bound). With WORKERS=2 a second one runs beside the first,
   for up to two claims: recovery runs may overlap, since a worker that was only stalled, not dead, resumes its run
   after the live ones found it silent and freed its locks (worker/liveness.ts), and another run took its claim
   over. The bound keeps two workers from taking the claim from each other for ever (each only after the other's
   lease and grace ran out), which would run the model's byte counters over; the fences do not depend on it. */
proctype Worker(byte limit) {
  byte wtok, wop, fails, claims;
end: do
  :: atomic {
       exists && !completed && WAKE <= now && (limit == 0 || claims < limit) ->
         NEWTOKEN; wtok = token; wop = op; locked_until = now + LW; workersBusy++; claims++
     }
     if
     :: fails < MAXFAIL ->                                       /* the lookup failed: give the claim back */
          fails++;
          atomic { if :: exists && token == wtok -> NEWTOKEN; locked_until = now; attempts++ :: else -> skip fi; workersBusy-- }
     :: performed[wop] ->                                        /* downstream did it: record and complete */
          atomic {
            if
#ifdef MUT_COMPLETE_UNFENCED
            :: exists && RECORDABLE(wop) ->
#else
            :: exists && token == wtok && RECORDABLE(wop) ->
#endif
               RECORD(wop);
               assert(completionsInLife[life] == 0);             /* (b) */
               completionsInLife[life]++;
               completed = 1; resp_op = wop; token = 0;
               if :: expires < now + TTL -> expires = now + TTL :: else -> skip fi
            :: else -> skip                     /* fenced off (its new holder settles it), or "no pending refund" */
            fi;
            workersBusy--
          }
     :: !performed[wop] ->                                       /* downstream never saw it: release */
          atomic {
#ifdef MUT_GIVEBACK_UNFENCED
            reserved[wop] = 0;
#endif
            if :: exists && token == wtok -> exists = 0; reserved[wop] = 0 :: else -> skip fi;
            workersBusy--
          }
     fi
  od
}

#ifdef DECIDED_LATER
/* The processor decides what it received, on its own time. */
active proctype Decider() {
end: do
  :: atomic { performed[1] && decision[1] == 0 -> if :: decision[1] = 1 :: decision[1] = 2 fi }
  :: atomic { performed[2] && decision[2] == 0 -> if :: decision[2] = 1 :: decision[2] = 2 fi }
  :: atomic { performed[3] && decision[3] == 0 -> if :: decision[3] = 1 :: decision[3] = 2 fi }
  :: atomic { performed[4] && decision[4] == 0 -> if :: decision[4] = 1 :: decision[4] = 2 fi }
  :: atomic { performed[5] && decision[5] == 0 -> if :: decision[5] = 1 :: decision[5] = 2 fi }
  od
}

/* Its news, at any time after the decision: applied once the books wait for it (before, it waits in the inbox, and
   is applied again later: src/processor-events/inbox.ts); applied again, it changes nothing. */
inline applyNews(o) {
  if :: decision[o] == 1 -> recorded[o]++ :: else -> skip fi;
  reserved[o] = 0; applied[o] = 1
}
active proctype News() {
end: do
  :: atomic { decision[1] != 0 && !applied[1] && waiting[1] -> applyNews(1) }
  :: atomic { decision[2] != 0 && !applied[2] && waiting[2] -> applyNews(2) }
  :: atomic { decision[3] != 0 && !applied[3] && waiting[3] -> applyNews(3) }
  :: atomic { decision[4] != 0 && !applied[4] && waiting[4] -> applyNews(4) }
  :: atomic { decision[5] != 0 && !applied[5] && waiting[5] -> applyNews(5) }
#ifdef MUT_EARLY_NEWS_IGNORED
  :: atomic { decision[1] != 0 && !applied[1] && !waiting[1] -> applied[1] = 1 }
  :: atomic { decision[2] != 0 && !applied[2] && !waiting[2] -> applied[2] = 1 }
#endif
  od
}
#endif

active proctype Reaper() {
end: do
  :: atomic { exists && completed && now >= expires -> expire(); exists = 0 }
  od
}

/* (c), whenever every request has ended, nothing flies and the worker is between claims: each operation is recorded
   at most once and only if the processor performed it, and one the processor performed but the books do not
   record yet is the key's unsettled operation (with its reservation, for refunds), which the worker will settle;
   so once the key is settled, the books equal the processor's ledger and nothing is left pending. The books
   (recorded + pending) never fall short of the processor. */
#define UNSETTLED(o) (exists && !completed && op == o)
#ifdef DECIDED_LATER
#define BOOKS_OK(o) (recorded[o] <= 1 && (recorded[o] == 0 || (decision[o] == 1 && applied[o])) && \
                     (!applied[o] || recorded[o] == (decision[o] == 1)) && \
                     (!performed[o] || waiting[o] || (UNSETTLED(o) && reserved[o])) && \
                     (!reserved[o] || UNSETTLED(o) || (waiting[o] && !applied[o])))
#else
#define BOOKS_OK(o) (recorded[o] <= performed[o] && \
                     (!performed[o] || recorded[o] == 1 || (UNSETTLED(o) && RESERVED(o))) && \
                     (!reserved[o] || UNSETTLED(o)))
#endif
#define QUIET (finished == NREQ && workersBusy == 0 && !callPending[1] && !callPending[2] && !callPending[3])
active proctype Quiescence() {
end: do
  :: atomic { QUIET -> assert(BOOKS_OK(1) && BOOKS_OK(2) && BOOKS_OK(3) && BOOKS_OK(4) && BOOKS_OK(5)) }
  od
}

/* And it settles: the worker (its failures bounded here) leaves no key unsettled once the requests have ended. */
active proctype Settled() {
  atomic { QUIET && (!exists || completed) }
}

/* R1 and its retry R2; with THIRD, R3 with another body; one recovery worker, or two with WORKERS=2. */
init {
  atomic {
    run Worker(0);
#if WORKERS == 2
    run Worker(2);
#endif
    run Request(1, 1);
    run Request(2, 1);
#ifdef THIRD
    run Request(3, 2)
#else
    finished++
#endif
  }
}
