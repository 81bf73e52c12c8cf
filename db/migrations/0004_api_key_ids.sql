-- API keys get an id to list and revoke them by (the key itself is shown once and never stored).
alter table api_keys add column id text unique check (id ~ '^key_[0-9a-f]{24}$');
update api_keys set id = 'key_' || substr(md5(random()::text || encode(key_hash, 'hex')), 1, 24) where id is null;
alter table api_keys alter column id set not null;
