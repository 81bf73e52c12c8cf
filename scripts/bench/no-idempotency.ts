// Baseline: the same charge with no idempotency at all. A retry charges again; this is the floor of the cost.
import { authenticate, baseline, listen } from './baseline.js'

const { app, sql, charge } = await baseline()

app.post('/v1/charges', async (request, reply) => {
  if (!(await authenticate(sql, request))) return reply.code(401).send({ error: 'unauthorized' })
  const response = await charge(request)
  return reply.code(response.status).send(response.body)
})

await listen(app)
