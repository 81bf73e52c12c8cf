// The API reference page, in a real browser: Debian's chromium driven by playwright-core. It loads with no
// console errors and no request leaving the machine, lists every operation in openapi.yaml, is branded as this
// API's (not Swagger's), shows the documented examples, and leaves a screenshot in artifacts/. Skipped, loudly,
// only where chromium cannot be found (.ci/run installs it).
import { existsSync } from 'node:fs'
import { mkdir, readFile } from 'node:fs/promises'
import { chromium, type Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { failOnContractViolations, setupTestApp, type TestContext } from '../helpers/app.js'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const available = existsSync(CHROMIUM)
if (!available)
  console.warn(
    `\n*** SKIPPING the browser test of /docs: no chromium at ${CHROMIUM} (apt-get install chromium, or set ` +
      `CHROMIUM_PATH) ***\n`,
  )

const spec = parse(await readFile(new URL('../../openapi.yaml', import.meta.url), 'utf8')) as {
  info: { title: string }
  components: { schemas: Record<string, { examples: unknown[] }> }
  paths: Record<string, Record<string, unknown>>
  webhooks?: Record<string, Record<string, unknown>>
}
let context: TestContext
let browser: Browser
let baseUrl: string

beforeAll(async () => {
  if (!available) return
  context = await setupTestApp()
  baseUrl = await context.app.listen({ port: 0, host: '127.0.0.1' })
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  })
}, 60_000)
afterAll(async () => {
  await browser?.close()
  await context?.close()
})

describe.runIf(available)('GET /docs in chromium', () => {
  it('when opened, then it renders every operation of openapi.yaml with no console error and nothing fetched from elsewhere', async () => {
    const page = await browser.newPage()
    const problems: string[] = []
    page.on('console', (message) => message.type() === 'error' && problems.push(`console: ${message.text()}`))
    page.on('pageerror', (error) => problems.push(`page: ${error.message}`))
    page.on(
      'request',
      (request) =>
        !request.url().startsWith(baseUrl) &&
        !request.url().startsWith('data:') &&
        problems.push(`external: ${request.url()}`),
    )
    page.on(
      'response',
      (response) => response.status() >= 400 && problems.push(`${response.status()}: ${response.url()}`),
    )

    await page.goto(`${baseUrl}/docs`)
    await page.waitForSelector('.opblock-summary', { timeout: 20_000 })
    const rendered = await page.$$eval('.opblock-summary', (blocks) =>
      blocks.map(
        (block) =>
          `${block.querySelector('.opblock-summary-method')?.textContent?.trim()} ` +
          `${block.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
      ),
    )
    // Paths, and the webhooks the service sends (Swagger UI shows those under their name).
    const documented = [...Object.entries(spec.paths), ...Object.entries(spec.webhooks ?? {})].flatMap(
      ([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    )
    expect(rendered.sort()).toEqual(documented.sort())
    await mkdir(new URL('../../artifacts/', import.meta.url), { recursive: true })
    await page.screenshot({ path: new URL('../../artifacts/docs.png', import.meta.url).pathname, fullPage: true })
    expect(problems).toEqual([])
    failOnContractViolations(context)
  }, 60_000)

  it('when opened, then it is this API’s page (its title and mark, no Swagger bar), and a charge’s example is the documented one', async () => {
    const page = await browser.newPage()
    await page.goto(`${baseUrl}/docs`)
    await page.waitForSelector('.opblock-summary', { timeout: 20_000 })
    expect(await page.title()).toBe(`${spec.info.title} reference`)
    expect(await page.$$eval('.topbar', (bars) => bars.length)).toBe(0)
    expect(await page.$$eval('link[rel=icon]', (links) => links.map((link) => link.getAttribute('href')))).toEqual([
      '/docs/static/theme/favicon.svg',
    ])
    await page.click('#operations-Charges-createCharge .opblock-summary')
    const shown = await page.waitForSelector(
      '#operations-Charges-createCharge tr.response[data-code="201"] pre.example',
    )
    expect(JSON.parse((await shown.textContent()) ?? '')).toEqual(spec.components.schemas.Charge?.examples[0])
  }, 60_000)

  it('when /openapi.yaml is opened, then the browser shows the document instead of downloading it', async () => {
    const page = await browser.newPage()
    await page.goto(`${baseUrl}/openapi.yaml`)
    expect(await page.textContent('body')).toContain('openapi: 3.1.0')
  }, 30_000)
})
