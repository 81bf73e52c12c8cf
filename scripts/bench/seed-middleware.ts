// Baseline: the simple idempotency middleware most articles show (the seed), on Fastify. INSERT ... ON CONFLICT
// DO NOTHING, then SELECT; run the handler; then UPDATE the key with the response. No fingerprint, lease, fencing
// or single transaction. With SEED_WRITES_EVENT=true its handler also writes the service's event row with the
// charge: the like-for-like comparison.
import { authenticate, baseline, listen } from './baseline.js'

const { app, sql, charge } = await baseline()
await sql`create table if not exists bench_seed_keys (
  account_id text not null, key text not null, status text not null,
  response_status int, response_body text, primary key (account_id, key))`

app.post('/v1/charges', async (request, reply) => {
  if (!(await authenticate(sql, request))) return reply.code(401).send({ error: 'unauthorized' })
  const accountId = (request as typeof request & { accountId: string }).accountId
  const key = String(request.headers['idempotency-key'])
  const inserted = await sql`
    insert into bench_seed_keys (account_id, key, status) values (${accountId}, ${key}, 'started') on conflict do
      nothing`
  const [row] = await sql<{ status: string; response_status: number; response_body: string }[]>`
    select status, response_status, response_body from bench_seed_keys where account_id = ${accountId} and key = ${key}`
  if (inserted.count === 0) {
    if (row?.status === 'completed')
      return reply.code(row.response_status).type('application/json').send(row.response_body)
    return reply.code(409).send({ error: 'in flight' })
  }
  const response = await charge(request, { event: process.env.SEED_WRITES_EVENT === 'true' })
  const body = JSON.stringify(response.body)
  await sql`update bench_seed_keys set status = 'completed', response_status = ${response.status}, response_body =
    ${body}
            where account_id = ${accountId} and key = ${key}`
  return reply.code(response.status).type('application/json').send(body)
})

await listen(app)
