-- Events and signed webhooks, as a transactional outbox: an event is written in the transaction that made the
-- change it tells of; a trigger writes one delivery per matching endpoint and wakes the sender, in that same
-- transaction. The delivery row is the truth; the graphile-worker job only wakes the sender.

create table events (
  id text primary key check (id ~ '^evt_[0-9a-f]{24}$'),
  seq bigint generated always as identity unique,
  account_id text not null references accounts (id),
  type text not null check (type ~ '^[a-z_]+\.[a-z_]+$'),
  -- The event as the API returns it, serialised once: every delivery and every read sends these very bytes.
  body text not null,
  created_at timestamptz not null default now()
);
create index events_account_id_seq on events (account_id, seq desc);
create index events_account_id_type_seq on events (account_id, type, seq desc);
create index events_created_at on events (created_at);

create table webhook_endpoints (
  id text primary key check (id ~ '^we_[0-9a-f]{24}$'),
  seq bigint generated always as identity unique,
  account_id text not null references accounts (id),
  url text not null check (char_length(url) between 1 and 2048),
  description text check (char_length(description) <= 500),
  enabled_events text[] not null check (cardinality(enabled_events) between 1 and 50),
  status text not null default 'enabled' check (status in ('enabled', 'disabled')),
  -- Why it was disabled: by the account, or by the endpoint itself answering 410 Gone.
  disabled_reason text check (char_length(disabled_reason) <= 200),
  -- The signing secrets (whsec_...): HMAC needs them in the clear. After a rotation the previous one keeps
  -- signing beside the new one until previous_secret_expires_at, as Standard Webhooks' multiple signatures allow.
  secret text not null check (secret ~ '^whsec_'),
  previous_secret text check (previous_secret ~ '^whsec_'),
  previous_secret_expires_at timestamptz,
  -- One delivery at a time per endpoint: a slow or dead endpoint holds one sender, never all of them. A lease,
  -- so that a sender that dies mid-attempt lets go of it.
  sending_until timestamptz,
  created_at timestamptz not null default now()
);
create index webhook_endpoints_account_id on webhook_endpoints (account_id, seq desc);

create table webhook_deliveries (
  id text primary key check (id ~ '^wd_[0-9a-f]{24}$'),
  event_id text not null references events (id) on delete cascade,
  endpoint_id text not null references webhook_endpoints (id) on delete cascade,
  account_id text not null references accounts (id),
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  -- Held while an attempt is under way; a sender that dies lets it go when it runs out.
  locked_until timestamptz,
  last_status_code smallint,
  delivered_at timestamptz,
  created_at timestamptz not null default now(),
  unique (event_id, endpoint_id)
);
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint_id on webhook_deliveries (endpoint_id, created_at desc);

create table webhook_attempts (
  id bigint generated always as identity primary key,
  delivery_id text not null references webhook_deliveries (id) on delete cascade,
  attempted_at timestamptz not null default now(),
  status_code smallint,
  duration_ms integer not null,
  -- The first 1,000 characters of the response, and why it failed when there was no response.
  response_excerpt text check (char_length(response_excerpt) <= 1000),
  error text check (char_length(error) <= 500)
);
create index webhook_attempts_delivery_id on webhook_attempts (delivery_id, id);

-- The fan-out: one delivery per enabled endpoint of the account that wants this type, and a job to send it,
-- in the transaction that wrote the event.
create function fan_out_event() returns trigger language plpgsql as $$
begin
  insert into webhook_deliveries (id, event_id, endpoint_id, account_id)
  select 'wd_' || substr(md5(gen_random_uuid()::text), 1, 24), new.id, e.id, e.account_id
  from webhook_endpoints e
  where e.account_id = new.account_id and e.status = 'enabled'
    and (new.type = any (e.enabled_events) or '*' = any (e.enabled_events));
  perform graphile_worker.add_job('deliver_webhook', json_build_object('delivery_id', d.id))
  from webhook_deliveries d where d.event_id = new.id;
  return null;
end $$;
create trigger events_fan_out after insert on events for each row execute function fan_out_event();
