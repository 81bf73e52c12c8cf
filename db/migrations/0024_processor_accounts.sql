-- Stripe Connect (docs/processors.md): an account may be linked to a connected account at the processor (Stripe's
-- acct_… id), by the operator (npm run account:link), never with the account's own key. Its new charges are then
-- made on that connected account, which each charge keeps (charges.processor_account): its captures, voids, refunds
-- and lookups go where it was made, whatever the link says later. One connected account serves one account.
alter table accounts add column processor_account text check (processor_account ~ '^acct_[A-Za-z0-9]{1,64}$');
alter table accounts add constraint accounts_processor_account_key unique (processor_account);
alter table charges add column processor_account text check (char_length(processor_account) <= 70);

-- A processor event keeps the processor account it is about (Stripe's `account` on a Connect endpoint's events): it
-- changes only charges made there. Each processor account's list of events is read from its own cursor ('' is the
-- platform's own account).
alter table processor_events add column processor_account text check (char_length(processor_account) <= 70);
alter table reconciliation_cursors add column processor_account text not null default '';
alter table reconciliation_cursors drop constraint reconciliation_cursors_pkey;
alter table reconciliation_cursors add primary key (processor, processor_account);
