-- Accounts, their API keys, charges, refunds and the idempotency records that make POSTs safe to retry.

create table accounts (
  id text primary key check (id ~ '^acct_[0-9a-f]{24}$'),
  name text not null check (char_length(name) between 1 and 200),
  created_at timestamptz not null default now()
);

-- Only a SHA-256 of each key is kept: a leaked table does not leak working keys.
create table api_keys (
  key_hash bytea primary key check (octet_length(key_hash) = 32),
  account_id text not null references accounts (id),
  key_prefix text not null check (char_length(key_prefix) <= 16),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index api_keys_account_id on api_keys (account_id);

create table charges (
  id text primary key check (id ~ '^ch_[0-9a-f]{24}$'),
  -- Insertion order, for stable cursor pagination (ids are random).
  seq bigint generated always as identity unique,
  account_id text not null references accounts (id),
  amount_cents integer not null check (amount_cents between 1 and 99999999),
  amount_refunded_cents integer not null default 0 check (amount_refunded_cents between 0 and amount_cents),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  source text not null check (char_length(source) between 1 and 255),
  description text check (char_length(description) <= 1000),
  metadata jsonb not null default '{}' check (jsonb_typeof(metadata) = 'object'),
  status text not null check (status in ('succeeded', 'failed')),
  failure_code text check (char_length(failure_code) <= 64),
  failure_message text check (char_length(failure_message) <= 500),
  processor_reference text check (char_length(processor_reference) <= 255),
  created_at timestamptz not null default now(),
  check ((status = 'failed') = (failure_code is not null))
);
create index charges_account_id_seq on charges (account_id, seq desc);

create table refunds (
  id text primary key check (id ~ '^re_[0-9a-f]{24}$'),
  seq bigint generated always as identity unique,
  account_id text not null references accounts (id),
  charge_id text not null references charges (id),
  amount_cents integer not null check (amount_cents between 1 and 99999999),
  status text not null check (status in ('succeeded')),
  processor_reference text check (char_length(processor_reference) <= 255),
  created_at timestamptz not null default now()
);
create index refunds_charge_id on refunds (charge_id);

-- One row per (account, endpoint, key). In flight: claim_token and locked_until are set.
-- Complete: the exact response is stored (body as bytes, not jsonb, so a replay is byte-identical).
create table idempotency_keys (
  id bigint generated always as identity primary key,
  account_id text not null references accounts (id),
  endpoint text not null check (char_length(endpoint) between 1 and 255),
  key text not null check (char_length(key) between 1 and 255),
  fingerprint bytea not null check (octet_length(fingerprint) = 32),
  -- Stable across takeovers of an abandoned claim, new when an expired key is reused:
  -- forwarded to the payment processor as its idempotency key, so a retry after a crash cannot charge twice.
  operation_id uuid not null,
  claim_token uuid,
  locked_until timestamptz,
  response_status smallint check (response_status between 100 and 599),
  response_headers jsonb,
  response_body bytea,
  created_at timestamptz not null default now(),
  completed_at timestamptz,
  expires_at timestamptz not null,
  unique (account_id, endpoint, key),
  check ((claim_token is not null and locked_until is not null) = (completed_at is null)),
  check ((completed_at is null) = (response_status is null)),
  check ((completed_at is null) = (response_body is null))
);
create index idempotency_keys_expires_at on idempotency_keys (expires_at);
