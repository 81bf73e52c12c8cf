-- Every table, view and index of the service as the migrations leave them, one statement each, in the
-- order they were made. Written by npm run schema from a migrated database and held equal to it by
-- test/db/schema.test.ts: change the schema with a new migration (db/migrations/), then run npm run schema.
-- Functions and triggers are in db/functions.sql. Each table names the migrations that mention it.

create schema simulated_processor;

-- accounts: 0001, 0005, 0007, 0014, 0017, 0022, 0024, 0025
create table accounts (
  id text not null,
  name text not null,
  created_at timestamp with time zone not null default now(),
  processor_account text,
  constraint accounts_pkey PRIMARY KEY (id),
  constraint accounts_processor_account_key UNIQUE (processor_account),
  constraint accounts_id_check CHECK ((id ~ '^acct_[0-9a-f]{24}$'::text)),
  constraint accounts_name_check CHECK (((char_length(name) >= 1) AND (char_length(name) <= 200))),
  constraint accounts_processor_account_check CHECK ((processor_account ~ '^acct_[A-Za-z0-9]{1,64}$'::text))
);

-- api_keys: 0001, 0004
create table api_keys (
  key_hash bytea not null,
  account_id text not null,
  key_prefix text not null,
  created_at timestamp with time zone not null default now(),
  revoked_at timestamp with time zone,
  id text not null,
  constraint api_keys_pkey PRIMARY KEY (key_hash),
  constraint api_keys_id_key UNIQUE (id),
  constraint api_keys_id_check CHECK ((id ~ '^key_[0-9a-f]{24}$'::text)),
  constraint api_keys_key_hash_check CHECK ((octet_length(key_hash) = 32)),
  constraint api_keys_key_prefix_check CHECK ((char_length(key_prefix) <= 16)),
  constraint api_keys_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);
CREATE INDEX api_keys_account_id ON api_keys USING btree (account_id);

-- charges: 0001, 0002, 0006, 0009, 0012, 0016, 0020, 0023, 0024, 0025, 0026
create table charges (
  id text not null,
  seq bigint generated always as identity,
  account_id text not null,
  amount_cents integer not null,
  amount_refunded_cents integer not null default 0,
  currency text not null,
  source text not null,
  description text,
  metadata jsonb not null default '{}'::jsonb,
  status text not null,
  failure_code text,
  failure_message text,
  processor_reference text,
  created_at timestamp with time zone not null default now(),
  amount_refund_pending_cents integer not null default 0,
  captured boolean not null default true,
  amount_captured_cents integer not null default 0,
  authorization_expires_at timestamp with time zone,
  pending_operation text,
  pending_operation_id text,
  pending_amount_cents integer,
  pending_until timestamp with time zone,
  next_action jsonb,
  dispute jsonb,
  processor_account text,
  constraint charges_pkey PRIMARY KEY (id),
  constraint charges_amount_captured_cents_check CHECK ((amount_captured_cents >= 0)),
  constraint charges_amount_cents_check CHECK (((amount_cents >= 1) AND (amount_cents <= 99999999))),
  constraint charges_amount_refund_pending_cents_check CHECK ((amount_refund_pending_cents >= 0)),
  constraint charges_amount_refunded_cents_check CHECK ((amount_refunded_cents >= 0)),
  constraint charges_captured_within_amount CHECK ((amount_captured_cents <= amount_cents)),
  constraint charges_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint charges_decided_later_pending CHECK (((status <> ALL (ARRAY['capture_pending'::text, 'void_pending'::text])) OR (pending_operation = "left"(status, '-8'::integer)))),
  constraint charges_description_check CHECK ((char_length(description) <= 1000)),
  constraint charges_failure_code CHECK (((status = 'failed'::text) = (failure_code IS NOT NULL))),
  constraint charges_failure_code_check CHECK ((char_length(failure_code) <= 64)),
  constraint charges_failure_message_check CHECK ((char_length(failure_message) <= 500)),
  constraint charges_id_check CHECK ((id ~ '^ch_[0-9a-f]{24}$'::text)),
  constraint charges_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text)),
  constraint charges_pending_amount_cents_check CHECK ((pending_amount_cents > 0)),
  constraint charges_pending_complete CHECK (((pending_operation IS NULL) = (pending_operation_id IS NULL))),
  constraint charges_pending_operation_check CHECK ((pending_operation = ANY (ARRAY['capture'::text, 'void'::text]))),
  constraint charges_pending_operation_id_check CHECK ((char_length(pending_operation_id) <= 100)),
  constraint charges_processor_account_check CHECK ((char_length(processor_account) <= 70)),
  constraint charges_processor_reference_check CHECK ((char_length(processor_reference) <= 255)),
  constraint charges_refunds_within_captured CHECK (((amount_refunded_cents + amount_refund_pending_cents) <= amount_captured_cents)),
  constraint charges_source_check CHECK (((char_length(source) >= 1) AND (char_length(source) <= 255))),
  constraint charges_status_check CHECK ((status = ANY (ARRAY['requires_action'::text, 'processing'::text, 'succeeded'::text, 'failed'::text, 'requires_capture'::text, 'capture_pending'::text, 'void_pending'::text, 'voided'::text, 'expired'::text]))),
  constraint charges_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);
CREATE INDEX charges_account_id_seq ON charges USING btree (account_id, seq DESC);
CREATE INDEX charges_authorizations_expiring ON charges USING btree (authorization_expires_at) WHERE (status = 'requires_capture'::text);
CREATE INDEX charges_undecided ON charges USING btree (seq) WHERE (status = ANY (ARRAY['requires_action'::text, 'processing'::text, 'capture_pending'::text, 'void_pending'::text]));

-- refunds: 0001, 0002, 0006, 0007, 0012, 0023, 0024, 0025
create table refunds (
  id text not null,
  seq bigint generated always as identity,
  account_id text not null,
  charge_id text not null,
  amount_cents integer not null,
  status text not null,
  processor_reference text,
  created_at timestamp with time zone not null default now(),
  operation_id uuid,
  currency text not null,
  failure_reason text,
  origin text not null default 'api'::text,
  refund_application_fee boolean not null default false,
  constraint refunds_pkey PRIMARY KEY (id),
  constraint refunds_operation_id_key UNIQUE (operation_id),
  constraint refunds_seq_key UNIQUE (seq),
  constraint refunds_amount_cents_check CHECK (((amount_cents >= 1) AND (amount_cents <= 99999999))),
  constraint refunds_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint refunds_failure_reason_check CHECK ((char_length(failure_reason) <= 100)),
  constraint refunds_id_check CHECK ((id ~ '^re_[0-9a-f]{24}$'::text)),
  constraint refunds_origin_check CHECK ((origin = ANY (ARRAY['api'::text, 'processor'::text]))),
  constraint refunds_processor_reference_check CHECK ((char_length(processor_reference) <= 255)),
  constraint refunds_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'succeeded'::text, 'failed'::text]))),
  constraint refunds_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  constraint refunds_charge_id_fkey FOREIGN KEY (charge_id) REFERENCES charges(id)
);
CREATE INDEX refunds_account_id_seq ON refunds USING btree (account_id, seq DESC);
CREATE INDEX refunds_charge_id ON refunds USING btree (charge_id);
CREATE INDEX refunds_charge_id_seq ON refunds USING btree (charge_id, seq DESC);
CREATE UNIQUE INDEX refunds_processor_made ON refunds USING btree (processor_reference) WHERE (operation_id IS NULL);

-- idempotency_keys: 0001, 0002, 0003, 0007, 0008, 0016, 0023
create table idempotency_keys (
  id bigint generated always as identity,
  account_id text not null,
  endpoint text not null,
  key text not null,
  fingerprint bytea not null,
  operation_id uuid not null,
  claim_token uuid,
  locked_until timestamp with time zone,
  response_status smallint,
  response_headers jsonb,
  response_body bytea,
  created_at timestamp with time zone not null default now(),
  completed_at timestamp with time zone,
  expires_at timestamp with time zone not null,
  request jsonb,
  recovery_attempts integer not null default 0,
  constraint idempotency_keys_pkey PRIMARY KEY (id),
  constraint idempotency_keys_account_id_endpoint_key_key UNIQUE (account_id, endpoint, key),
  constraint idempotency_keys_check CHECK ((((claim_token IS NOT NULL) AND (locked_until IS NOT NULL)) = (completed_at IS NULL))),
  constraint idempotency_keys_check1 CHECK (((completed_at IS NULL) = (response_status IS NULL))),
  constraint idempotency_keys_check2 CHECK (((completed_at IS NULL) = (response_body IS NULL))),
  constraint idempotency_keys_endpoint_check CHECK (((char_length(endpoint) >= 1) AND (char_length(endpoint) <= 255))),
  constraint idempotency_keys_fingerprint_check CHECK ((octet_length(fingerprint) = 32)),
  constraint idempotency_keys_key_check CHECK (((char_length(key) >= 1) AND (char_length(key) <= 255))),
  constraint idempotency_keys_response_status_check CHECK (((response_status >= 100) AND (response_status <= 599)))
);
CREATE INDEX idempotency_keys_abandoned ON idempotency_keys USING btree (locked_until) WHERE (completed_at IS NULL);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys USING btree (expires_at);

-- simulated_processor.operations: 0002, 0006, 0011, 0012, 0026
create table simulated_processor.operations (
  idempotency_key text not null,
  kind text not null,
  parameters jsonb not null,
  outcome jsonb not null,
  created_at timestamp with time zone not null default now(),
  state jsonb,
  constraint operations_pkey PRIMARY KEY (idempotency_key),
  constraint operations_idempotency_key_check CHECK ((char_length(idempotency_key) <= 255))
);
CREATE UNIQUE INDEX operations_one_settlement ON simulated_processor.operations USING btree (((parameters ->> 'charge_reference'::text))) WHERE ((kind = ANY (ARRAY['capture'::text, 'void'::text])) AND (COALESCE((state ->> 'performed'::text), 'true'::text) <> 'false'::text));
CREATE INDEX simulated_processor_refunds ON simulated_processor.operations USING btree (((parameters ->> 'charge_reference'::text))) WHERE (kind = 'refund'::text);

-- events: 0005, 0007, 0009, 0012, 0015, 0022, 0024
create table events (
  id text not null,
  seq bigint generated always as identity,
  account_id text not null,
  type text not null,
  body text not null,
  created_at timestamp with time zone not null default now(),
  constraint events_pkey PRIMARY KEY (id),
  constraint events_id_check CHECK ((id ~ '^evt_[0-9a-f]{24}$'::text)),
  constraint events_type_check CHECK ((type ~ '^[a-z_]+(\.[a-z_]+)+$'::text))
);
CREATE INDEX events_account_id_seq ON events USING btree (account_id, seq DESC);
CREATE INDEX events_account_id_type_seq ON events USING btree (account_id, type, seq DESC);
CREATE INDEX events_created_at ON events USING btree (created_at);

-- webhook_endpoints: 0005, 0007
create table webhook_endpoints (
  id text not null,
  seq bigint generated always as identity,
  account_id text not null,
  url text not null,
  description text,
  enabled_events text[] not null,
  status text not null default 'enabled'::text,
  disabled_reason text,
  secret text not null,
  previous_secret text,
  previous_secret_expires_at timestamp with time zone,
  sending_until timestamp with time zone,
  created_at timestamp with time zone not null default now(),
  constraint webhook_endpoints_pkey PRIMARY KEY (id),
  constraint webhook_endpoints_seq_key UNIQUE (seq),
  constraint webhook_endpoints_description_check CHECK ((char_length(description) <= 500)),
  constraint webhook_endpoints_disabled_reason_check CHECK ((char_length(disabled_reason) <= 200)),
  constraint webhook_endpoints_enabled_events_check CHECK (((cardinality(enabled_events) >= 1) AND (cardinality(enabled_events) <= 50))),
  constraint webhook_endpoints_id_check CHECK ((id ~ '^we_[0-9a-f]{24}$'::text)),
  constraint webhook_endpoints_previous_secret_check CHECK ((previous_secret ~ '^whsec_'::text)),
  constraint webhook_endpoints_secret_check CHECK ((secret ~ '^whsec_'::text)),
  constraint webhook_endpoints_status_check CHECK ((status = ANY (ARRAY['enabled'::text, 'disabled'::text]))),
  constraint webhook_endpoints_url_check CHECK (((char_length(url) >= 1) AND (char_length(url) <= 2048))),
  constraint webhook_endpoints_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);
CREATE INDEX webhook_endpoints_account_id ON webhook_endpoints USING btree (account_id, seq DESC);

-- webhook_deliveries: 0005, 0007, 0013
create table webhook_deliveries (
  id text not null,
  event_id text not null,
  endpoint_id text not null,
  account_id text not null,
  status text not null default 'pending'::text,
  attempts integer not null default 0,
  next_attempt_at timestamp with time zone not null default now(),
  locked_until timestamp with time zone,
  last_status_code smallint,
  delivered_at timestamp with time zone,
  created_at timestamp with time zone not null default now(),
  constraint webhook_deliveries_pkey PRIMARY KEY (id),
  constraint webhook_deliveries_event_id_endpoint_id_key UNIQUE (event_id, endpoint_id),
  constraint webhook_deliveries_id_check CHECK ((id ~ '^wd_[0-9a-f]{24}$'::text)),
  constraint webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'delivered'::text, 'failed'::text]))),
  constraint webhook_deliveries_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id),
  constraint webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  constraint webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id) ON DELETE CASCADE
);
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries USING btree (endpoint_id, next_attempt_at) WHERE (status = 'pending'::text);
CREATE INDEX webhook_deliveries_endpoint_id ON webhook_deliveries USING btree (endpoint_id, created_at DESC);
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries USING btree (locked_until) WHERE ((status = 'pending'::text) AND (locked_until IS NOT NULL));
CREATE INDEX webhook_deliveries_unclaimed ON webhook_deliveries USING btree (next_attempt_at) WHERE ((status = 'pending'::text) AND (locked_until IS NULL));

-- webhook_attempts: 0005
create table webhook_attempts (
  id bigint generated always as identity,
  delivery_id text not null,
  attempted_at timestamp with time zone not null default now(),
  status_code smallint,
  duration_ms integer not null,
  response_excerpt text,
  error text,
  constraint webhook_attempts_pkey PRIMARY KEY (id),
  constraint webhook_attempts_error_check CHECK ((char_length(error) <= 500)),
  constraint webhook_attempts_response_excerpt_check CHECK ((char_length(response_excerpt) <= 1000)),
  constraint webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery_id ON webhook_attempts USING btree (delivery_id, id);

-- worker_heartbeats: 0010, 0019
create table worker_heartbeats (
  pool_id text not null,
  process text not null,
  seen_at timestamp with time zone not null default now(),
  heard_since timestamp with time zone not null default now(),
  constraint worker_heartbeats_pkey PRIMARY KEY (pool_id),
  constraint worker_heartbeats_pool_id_check CHECK ((char_length(pool_id) <= 100)),
  constraint worker_heartbeats_process_check CHECK ((char_length(process) <= 200))
);

-- processor_events: 0012, 0015, 0024
create table processor_events (
  id text not null,
  type text not null,
  processor_created_at timestamp with time zone not null,
  received_via text not null,
  changes jsonb not null,
  status text not null,
  note text,
  attempts integer not null default 1,
  received_at timestamp with time zone not null default now(),
  settled_at timestamp with time zone,
  processor_account text,
  constraint processor_events_pkey PRIMARY KEY (id),
  constraint processor_events_changes_check CHECK ((jsonb_typeof(changes) = 'array'::text)),
  constraint processor_events_check CHECK (((status = 'waiting'::text) = (settled_at IS NULL))),
  constraint processor_events_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
  constraint processor_events_note_check CHECK ((char_length(note) <= 500)),
  constraint processor_events_processor_account_check CHECK ((char_length(processor_account) <= 70)),
  constraint processor_events_received_via_check CHECK ((received_via = ANY (ARRAY['webhook'::text, 'reconciliation'::text]))),
  constraint processor_events_status_check CHECK ((status = ANY (ARRAY['applied'::text, 'waiting'::text, 'ignored'::text]))),
  constraint processor_events_type_check CHECK (((char_length(type) >= 1) AND (char_length(type) <= 100)))
);
CREATE INDEX processor_events_payouts ON processor_events USING btree (received_at) WHERE (type ~~ 'payout.%'::text);
CREATE INDEX processor_events_waiting ON processor_events USING btree (received_at) WHERE (status = 'waiting'::text);

-- reconciliation_cursors: 0012, 0024
create table reconciliation_cursors (
  processor text not null,
  events_since timestamp with time zone not null,
  compared_after_seq bigint not null default 0,
  refunds_compared_after_seq bigint not null default 0,
  compared_since timestamp with time zone not null,
  last_run_at timestamp with time zone,
  processor_account text not null default ''::text,
  constraint reconciliation_cursors_pkey PRIMARY KEY (processor, processor_account)
);

-- reconciliation_discrepancies: 0012
create table reconciliation_discrepancies (
  id bigint generated always as identity,
  kind text not null,
  reference text not null,
  account_id text,
  detail text not null,
  books jsonb,
  processor jsonb,
  detected_at timestamp with time zone not null default now(),
  last_seen_at timestamp with time zone not null default now(),
  resolved_at timestamp with time zone,
  constraint reconciliation_discrepancies_pkey PRIMARY KEY (id),
  constraint reconciliation_discrepancies_detail_check CHECK ((char_length(detail) <= 1000)),
  constraint reconciliation_discrepancies_kind_check CHECK ((char_length(kind) <= 60)),
  constraint reconciliation_discrepancies_reference_check CHECK ((char_length(reference) <= 255))
);
CREATE UNIQUE INDEX reconciliation_discrepancies_open ON reconciliation_discrepancies USING btree (kind, reference) WHERE (resolved_at IS NULL);

-- simulated_processor.events: 0012
create table simulated_processor.events (
  id text not null,
  seq bigint generated always as identity,
  type text not null,
  changes jsonb not null,
  created_at timestamp with time zone not null default now(),
  constraint events_pkey PRIMARY KEY (id),
  constraint events_seq_key UNIQUE (seq)
);
CREATE INDEX simulated_processor_events_created ON simulated_processor.events USING btree (created_at);

-- simulated_processor.disputes: 0012
create table simulated_processor.disputes (
  reference text not null,
  payment_reference text not null,
  state jsonb not null,
  created_at timestamp with time zone not null default now(),
  constraint disputes_pkey PRIMARY KEY (reference),
  constraint disputes_payment_reference_key UNIQUE (payment_reference)
);

-- ledger_transactions: 0014, 0015, 0017, 0022, 0025
create table ledger_transactions (
  account_id text not null,
  id text not null,
  seq bigint generated always as identity,
  type text not null,
  source text not null,
  posting text not null,
  amount_cents bigint not null,
  fee_cents bigint not null,
  fee_details jsonb not null default '[]'::jsonb,
  net_cents bigint not null,
  currency text not null,
  available_on timestamp with time zone not null,
  payout text,
  created_at timestamp with time zone not null default now(),
  entry_accounts text[] not null,
  entry_cents bigint[] not null,
  constraint ledger_transactions_pkey PRIMARY KEY (account_id, id),
  constraint ledger_transactions_account_id_posting_key UNIQUE (account_id, posting),
  constraint ledger_transaction_balances CHECK (ledger_balances(id, posting, net_cents, entry_accounts, entry_cents)),
  constraint ledger_transactions_check CHECK ((net_cents = (amount_cents - fee_cents))),
  constraint ledger_transactions_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint ledger_transactions_fee_cents_check CHECK (((fee_cents >= 0) OR (type = 'refund'::text))),
  constraint ledger_transactions_fee_details_check CHECK ((jsonb_typeof(fee_details) = 'array'::text)),
  constraint ledger_transactions_id_check CHECK ((id ~ '^txn_[0-9a-f]{24}$'::text)),
  constraint ledger_transactions_payout_check CHECK ((char_length(payout) <= 255)),
  constraint ledger_transactions_posting_check CHECK (((char_length(posting) >= 1) AND (char_length(posting) <= 300))),
  constraint ledger_transactions_source_check CHECK (((char_length(source) >= 1) AND (char_length(source) <= 255))),
  constraint ledger_transactions_type_check CHECK ((type = ANY (ARRAY['charge'::text, 'refund'::text, 'refund_failure'::text, 'dispute'::text, 'dispute_reversal'::text, 'payout'::text, 'payout_failure'::text, 'payout_arrival'::text]))),
  constraint ledger_transactions_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);
CREATE INDEX ledger_transactions_account_seq ON ledger_transactions USING btree (account_id, seq DESC);
CREATE INDEX ledger_transactions_payout ON ledger_transactions USING btree (payout, account_id) WHERE (payout IS NOT NULL);
CREATE INDEX ledger_transactions_settles_at ON ledger_transactions USING btree (account_id, ledger_settles_at(net_cents, created_at, available_on));
CREATE INDEX ledger_transactions_source ON ledger_transactions USING btree (source, account_id);

-- ledger_entries: 0014
create view ledger_entries as
 SELECT t.account_id,
    t.id AS transaction_id,
    (e.n - 1)::smallint AS entry,
    e.ledger_account,
    e.amount_cents
   FROM ledger_transactions t,
    LATERAL UNNEST(t.entry_accounts, t.entry_cents) WITH ORDINALITY e(ledger_account, amount_cents, n);

-- simulated_processor.payouts: 0015
create table simulated_processor.payouts (
  reference text not null,
  state jsonb not null,
  created_at timestamp with time zone not null default now(),
  constraint payouts_pkey PRIMARY KEY (reference)
);

-- ledger_settled_balances: 0017
create table ledger_settled_balances (
  account_id text not null,
  currency text not null,
  through timestamp with time zone not null,
  net_cents bigint not null,
  constraint ledger_settled_balances_pkey PRIMARY KEY (account_id, currency),
  constraint ledger_settled_balances_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint ledger_settled_balances_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);

-- payouts: 0015, 0022
create table payouts (
  account_id text not null,
  id text not null,
  seq bigint generated always as identity,
  amount_cents bigint not null,
  currency text not null,
  status text not null,
  arrival_date timestamp with time zone,
  failure_code text,
  created_at timestamp with time zone not null default now(),
  updated_at timestamp with time zone not null default now(),
  constraint payouts_pkey PRIMARY KEY (account_id, id),
  constraint payouts_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint payouts_failure_code_check CHECK ((char_length(failure_code) <= 255)),
  constraint payouts_id_check CHECK (((char_length(id) >= 1) AND (char_length(id) <= 255))),
  constraint payouts_status_check CHECK ((status = ANY (ARRAY['in_transit'::text, 'paid'::text, 'failed'::text]))),
  constraint payouts_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);
CREATE INDEX payouts_account_seq ON payouts USING btree (account_id, seq DESC);

-- platform_pricing: 0025
create table platform_pricing (
  account_id text not null,
  currency text not null,
  percent_basis_points integer not null,
  fixed_amount integer not null,
  constraint platform_pricing_pkey PRIMARY KEY (account_id, currency),
  constraint platform_pricing_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint platform_pricing_fixed_amount_check CHECK (((fixed_amount >= 0) AND (fixed_amount <= 99999999))),
  constraint platform_pricing_percent_basis_points_check CHECK (((percent_basis_points >= 0) AND (percent_basis_points <= 10000))),
  constraint platform_pricing_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);

-- platform_fees: 0025
create table platform_fees (
  account_id text not null,
  id text not null,
  seq bigint generated always as identity,
  type text not null,
  source text not null,
  posting text not null,
  amount_cents bigint not null,
  currency text not null,
  created_at timestamp with time zone not null default now(),
  constraint platform_fees_pkey PRIMARY KEY (account_id, id),
  constraint platform_fees_account_id_posting_key UNIQUE (account_id, posting),
  constraint platform_fees_amount_cents_check CHECK ((amount_cents <> 0)),
  constraint platform_fees_check CHECK (((type = 'application_fee'::text) = (amount_cents > 0))),
  constraint platform_fees_currency_check CHECK ((currency ~ '^[a-z]{3}$'::text)),
  constraint platform_fees_id_check CHECK ((id ~ '^pfee_[0-9a-f]{24}$'::text)),
  constraint platform_fees_posting_check CHECK (((char_length(posting) >= 1) AND (char_length(posting) <= 300))),
  constraint platform_fees_source_check CHECK (((char_length(source) >= 1) AND (char_length(source) <= 255))),
  constraint platform_fees_type_check CHECK ((type = ANY (ARRAY['application_fee'::text, 'application_fee_refund'::text]))),
  constraint platform_fees_account_id_fkey FOREIGN KEY (account_id) REFERENCES accounts(id)
);
