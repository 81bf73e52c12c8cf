// Serves the hand-written OpenAPI document at /openapi.yaml.
import { readFile } from 'node:fs/promises'
import type { FastifyInstance } from 'fastify'

const OPENAPI_PATH = new URL('../../openapi.yaml', import.meta.url)

export default async function openapiRoutes(app: FastifyInstance) {
  const document = await readFile(OPENAPI_PATH)
  app.get('/openapi.yaml', async (_request, reply) => reply.type('application/yaml; charset=utf-8').send(document))
}
