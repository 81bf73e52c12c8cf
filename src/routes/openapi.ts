// The hand-written OpenAPI document, as written (/openapi.yaml, shown as text by browsers) and as JSON
// (/openapi.json), and an interactive reference page at /docs (Swagger UI, served from this service's own
// files: no CDN, so it works on machines with no internet).
import { readFile } from 'node:fs/promises'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { parse } from 'yaml'

const OPENAPI_PATH = new URL('../../openapi.yaml', import.meta.url)

export default async function openapiRoutes(app: FastifyInstance) {
  const text = await readFile(OPENAPI_PATH, 'utf8')
  const document = parse(text) as Record<string, unknown>
  const json = JSON.stringify(document)
  // text/yaml rather than application/yaml: browsers display it instead of downloading it.
  app.get('/openapi.yaml', async (_request, reply) => reply.type('text/yaml; charset=utf-8').send(text))
  app.get('/openapi.json', async (_request, reply) => reply.type('application/json; charset=utf-8').send(json))

  await app.register(swagger, { mode: 'static', specification: { document: document as never } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No call home: the validator badge would fetch validator.swagger.io.
    uiConfig: { validatorUrl: null, docExpansion: 'list', deepLinking: true, tryItOutEnabled: false },
    // A strict Content-Security-Policy; Swagger UI sets some styles inline, and needs nothing from elsewhere.
    staticCSP: true,
    transformStaticCSP: (header) => header.replace("style-src 'self' https:", "style-src 'self' 'unsafe-inline'").replace(/ https:/g, ''),
  })
}
