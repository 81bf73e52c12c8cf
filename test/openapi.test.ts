// openapi.yaml is hand-written for readers; these checks keep it true to the routes and resources.
import { readFile } from 'node:fs/promises'
import Fastify, { type RouteOptions } from 'fastify'
import { pino } from 'pino'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { appPlugin } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { PROBLEM_TYPES } from '../src/problems.js'
import { SUPPORTED_CURRENCIES } from '../src/schemas/common.js'
import { CreateChargeBody } from '../src/schemas/charge.js'
import { chargeBody, failOnContractViolations, setupTestApp, type TestContext } from './helpers/app.js'

const specText = await readFile(new URL('../openapi.yaml', import.meta.url), 'utf8')
const spec = parse(specText)
let context: TestContext

beforeAll(async () => {
  context = await setupTestApp()
})
afterEach(() => failOnContractViolations(context))
afterAll(() => context.close())

describe('openapi.yaml', () => {
  it('when compared with the app, then it documents every route and no route that does not exist', async () => {
    const routes: string[] = []
    const app = Fastify({ loggerInstance: pino({ level: 'silent' }) })
    app.addHook('onRoute', (route: RouteOptions) => {
      // The reference page's own files (/docs/static/..., /docs/json) are its business, not the API's.
      if (route.url.startsWith('/docs/')) return
      for (const method of [route.method].flat()) if (method !== 'HEAD') routes.push(`${method} ${route.url.replace(/:(\w+)/g, '{$1}')}`)
    })
    await app.register(appPlugin, { sql: context.sql, processor: context.processor, config: loadConfig({}) })
    await app.ready()
    await app.close()

    const documented = Object.entries(spec.paths as Record<string, object>).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(documented.sort()).toEqual(routes.sort())
  })

  it('when a $ref is followed, then it leads somewhere', () => {
    const refs: string[] = []
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk)
      else if (node && typeof node === 'object') {
        for (const [name, value] of Object.entries(node)) name === '$ref' ? refs.push(value as string) : walk(value)
      }
    }
    walk(spec)
    expect(refs.length).toBeGreaterThan(20)
    for (const ref of refs) {
      const target = ref.replace(/^#\//, '').split('/').reduce<any>((node, segment) => node?.[segment], spec)
      expect(target, ref).toBeDefined()
    }
  })

  it('when a problem type exists, then the document names it', () => {
    for (const type of Object.keys(PROBLEM_TYPES)) expect(specText).toContain(type)
  })

  it('when a charge is created, then its fields are exactly the documented ones', async () => {
    const account = await context.newAccount()
    const charge = (await account.post('/v1/charges', chargeBody())).json()
    const refund = (await account.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 1 })).json()
    expect(Object.keys(charge).sort()).toEqual([...spec.components.schemas.Charge.required].sort())
    expect(Object.keys(refund).sort()).toEqual([...spec.components.schemas.Refund.required].sort())
  })

  it('when the request schemas change, then the document follows', () => {
    expect(Object.keys(spec.components.schemas.CreateCharge.properties).sort()).toEqual(Object.keys(CreateChargeBody.properties).sort())
    expect(spec.components.schemas.Currency.enum).toEqual([...SUPPORTED_CURRENCIES])
  })

  it('is served at /openapi.yaml as the file’s bytes', async () => {
    const response = await context.app.inject({ method: 'GET', url: '/openapi.yaml' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('text/yaml; charset=utf-8')
    expect(response.body).toBe(specText)
  })
})
