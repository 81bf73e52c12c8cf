-- Which graphile-worker pools are alive: each running pool writes its row every few seconds (src/worker/liveness.ts).
-- A pool whose row is stale while it still holds job or queue locks is dead (SIGKILLed, its host gone), and its
-- locks are freed for the live pools, instead of after graphile-worker's own four-hour stale-lock reset.
create table worker_heartbeats (
  pool_id text primary key check (char_length(pool_id) <= 100),
  process text not null check (char_length(process) <= 200),
  seen_at timestamptz not null default now()
);
