// openapi.yaml, built from the routes (src/openapi/document.ts): as YAML (/openapi.yaml, shown as text by
// browsers), as JSON (/openapi.json), and as an interactive reference page at /docs (Swagger UI, served from this
// service's own files: no CDN, so it works on machines with no internet). Registered after every other route, so
// that the document it builds has them all.
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { type DocumentedRoute, openapiDocument, openapiYaml } from '../openapi/document.js'
import { INFO } from '../openapi/frame.js'

// A coin: this service's own mark in the browser's tab, rather than Swagger's.
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#1f6f4a"/><text ' +
  'x="8" y="12" font-size="10" font-family="sans-serif" text-anchor="middle" fill="#fff">$</text></svg>'

const document = (contentType: string) => ({
  description: 'The OpenAPI document.',
  contentType,
  schema: { type: contentType === 'text/yaml' ? 'string' : 'object' },
})

export default async function openapiRoutes(app: FastifyInstance, options: { routes: DocumentedRoute[] }) {
  let yaml = ''
  let json = ''
  const asYaml = {
    operationId: 'openapi',
    tag: 'Service' as const,
    summary: 'This document (text/yaml, which browsers display)',
    public: true,
    responses: { 200: document('text/yaml') },
  }
  // text/yaml rather than application/yaml: browsers display it instead of downloading it.
  app.get('/openapi.yaml', { config: { openapi: asYaml } }, async (_request, reply) =>
    reply.type('text/yaml; charset=utf-8').send(yaml),
  )
  const asJson = {
    operationId: 'openapiJson',
    tag: 'Service' as const,
    summary: 'This document, as JSON',
    public: true,
    responses: { 200: document('application/json') },
  }
  app.get('/openapi.json', { config: { openapi: asJson } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(json),
  )

  const built = openapiDocument(options.routes)
  yaml = openapiYaml(built)
  json = JSON.stringify(built)
  await app.register(swagger, { mode: 'static', specification: { document: built as never } })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // No call home: the validator badge would fetch validator.swagger.io.
    // BaseLayout: the document alone, without Swagger's top bar (its logo, and a box showing the address the page
    // loads the document from, /docs/json, which is the plugin's; /openapi.json is the address that stays).
    uiConfig: {
      validatorUrl: null,
      docExpansion: 'list',
      deepLinking: true,
      tryItOutEnabled: false,
      layout: 'BaseLayout',
    },
    theme: {
      title: `${INFO.title} reference`,
      favicon: [{ filename: 'favicon.svg', rel: 'icon', type: 'image/svg+xml', sizes: 'any', content: FAVICON }],
    },
    // A strict Content-Security-Policy; Swagger UI sets some styles inline, and needs nothing from elsewhere.
    staticCSP: true,
    transformStaticCSP: (header) =>
      header.replace("style-src 'self' https:", "style-src 'self' 'unsafe-inline'").replace(/ https:/g, ''),
  })
}
