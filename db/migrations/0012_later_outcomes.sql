-- Outcomes that arrive after the answer (docs/later-outcomes.md): charges that wait for the customer's
-- authentication or for a bank debit to settle, refunds that fail later or are made at the processor, disputes;
-- the inbox of the processor's events; and what the reconciliation found. Every change here adds columns with
-- no default to rewrite, or tables: an existing database upgrades without rewriting a table.

alter table charges drop constraint charges_status_check;
alter table charges add constraint charges_status_check
  check (status in ('requires_action', 'processing', 'succeeded', 'failed', 'requires_capture', 'voided', 'expired'));
-- While requires_action: what the customer must do (the API's next_action, as stored).
alter table charges add column next_action jsonb;
-- The customer's dispute, as the processor last told it (the API's dispute, as stored).
alter table charges add column dispute jsonb;
-- The charges that are not decided yet, which the comparison with the processor looks at whatever their age. A
-- partial index: a charge decided when it is made (nearly all) never enters it, and costs no write here.
create index charges_undecided on charges (seq) where status in ('requires_action', 'processing');

alter table refunds drop constraint refunds_status_check;
alter table refunds add constraint refunds_status_check check (status in ('pending', 'succeeded', 'failed'));
alter table refunds add column failure_reason text check (char_length(failure_reason) <= 100);
-- api: asked of this service; processor: made at the processor (its dashboard), learnt from its events.
alter table refunds add column origin text not null default 'api' check (origin in ('api', 'processor'));
-- A refund made at the processor has no operation id: its events find it by the processor's id. Refunds this
-- service asked for are found by their operation id (unique), so they need no entry here.
create unique index refunds_processor_made on refunds (processor_reference) where operation_id is null;

-- Event types with more than one dot (charge.dispute.created).
alter table events drop constraint events_type_check;
alter table events add constraint events_type_check check (type ~ '^[a-z_]+(\.[a-z_]+)+$');

-- The processor's events, each once: a webhook delivery and the reconciliation's list may both bring one, in any
-- order, any number of times; the id deduplicates. `waiting`: its object is not in the books yet (a webhook
-- that overtook the answer it follows), retried by the reconciliation until it applies.
create table processor_events (
  id text primary key check (char_length(id) between 1 and 255),
  type text not null check (char_length(type) between 1 and 100),
  processor_created_at timestamptz not null,
  received_via text not null check (received_via in ('webhook', 'reconciliation')),
  changes jsonb not null check (jsonb_typeof(changes) = 'array'),
  status text not null check (status in ('applied', 'waiting', 'ignored')),
  note text check (char_length(note) <= 500),
  attempts integer not null default 1,
  received_at timestamptz not null default now(),
  settled_at timestamptz,
  check ((status = 'waiting') = (settled_at is null))
);
create index processor_events_waiting on processor_events (received_at) where status = 'waiting';

-- How far the reconciliation has read the processor's events, and compared its payments with the books.
create table reconciliation_cursors (
  processor text primary key,
  events_since timestamptz not null,
  compared_after_seq bigint not null default 0,
  refunds_compared_after_seq bigint not null default 0,
  compared_since timestamptz not null,
  last_run_at timestamptz
);

-- Where the books and the processor disagree, for an operator: reported, never "fixed" by the service.
create table reconciliation_discrepancies (
  id bigint generated always as identity primary key,
  kind text not null check (char_length(kind) <= 60),
  reference text not null check (char_length(reference) <= 255),
  account_id text,
  detail text not null check (char_length(detail) <= 1000),
  books jsonb,
  processor jsonb,
  detected_at timestamptz not null default now(),
  last_seen_at timestamptz not null default now(),
  resolved_at timestamptz
);
create unique index reconciliation_discrepancies_open on reconciliation_discrepancies (kind, reference) where resolved_at is null;

-- The simulated processor's later outcomes: the events it tells; each payment's and refund's state once it moved
-- after its first answer (null: as that answer said), with the charge it was made for; and its disputes.
create table simulated_processor.events (
  id text primary key,
  seq bigint generated always as identity unique,
  type text not null,
  changes jsonb not null,
  created_at timestamptz not null default now()
);
create index simulated_processor_events_created on simulated_processor.events (created_at);
alter table simulated_processor.operations add column state jsonb;
create table simulated_processor.disputes (
  reference text primary key,
  payment_reference text not null unique,
  state jsonb not null,
  created_at timestamptz not null default now()
);
