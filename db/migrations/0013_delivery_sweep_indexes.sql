-- The sweep (src/webhooks/sweep.ts) and the sender's hand-over (src/webhooks/deliveries.ts) read pending
-- deliveries through indexes that hold only the rows each looks for, so what a run costs follows what it finds,
-- not the size of the table: under load, the old index on every pending delivery's next_attempt_at made the sweep
-- filter each due delivery a live sender held, and it ran into the statement timeout.
drop index webhook_deliveries_due;
-- Leases of senders that may be gone.
create index webhook_deliveries_leased on webhook_deliveries (locked_until) where status = 'pending' and locked_until is not null;
-- Deliveries no sender holds, by when they fell due.
create index webhook_deliveries_unclaimed on webhook_deliveries (next_attempt_at) where status = 'pending' and locked_until is null;
-- An endpoint's next due delivery, oldest first.
create index webhook_deliveries_endpoint_due on webhook_deliveries (endpoint_id, next_attempt_at) where status = 'pending';
