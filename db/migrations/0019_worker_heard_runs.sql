-- Since when each pool has been heard without a break: its heartbeats are a run from heard_since to seen_at, begun
-- again after a gap. A pool is dead once the database has heard others, in these runs, for WORKER_DEAD_AFTER_SECONDS
-- since it last heard from the pool (src/worker/liveness.ts): time in which nobody could speak (an outage, a
-- failover) does not count against anyone, and a restarted process does not start the clock again.
alter table worker_heartbeats add column heard_since timestamptz not null default now();
