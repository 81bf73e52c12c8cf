// The checklist of docs/extending.md as edits a forker makes to add payouts (a money-moving resource against a
// balance), each with the check of the template that catches it when it is forgotten, and the words that check
// must say. npm run check:template (check.ts) applies them all to a copy of the repository and runs the checks
// (all pass), then leaves each step out in turn (its check must fail, saying those words). Edits to shared files
// are by structure (structure.ts: "a property of ID_PREFIXES", "a member of the interface Operations"), never by
// the text around them, so a fork that changed those files keeps a working check.
import type { StructuralEdit } from './structure.js'

export type Check = { kind: 'tsc' } | { kind: 'vitest'; files: string[] }

export type Edit = StructuralEdit & {
  /** A file of the repository. */
  file: string
}

export interface Step {
  name: string
  /** New files, copied from test/template/payouts (same paths). */
  adds?: string[]
  edits?: Edit[]
  /** A command to run once the edits are made (npm run openapi), and the file it makes (openapi.yaml). */
  runs?: { command: string; makes: string }
  catchesOmission: Check
  /** What the check says when the step was forgotten. */
  says: RegExp
}

const PAYOUTS_TEST: Check = { kind: 'vitest', files: ['test/payouts/payouts.test.ts'] }

export const STEPS: Step[] = [
  {
    name: 'the schema of the resource and its bodies',
    adds: ['src/schemas/payout.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '\.\.\/schemas\/payout\.js'/,
  },
  {
    name: 'its id prefix, declared once',
    edits: [{ file: 'src/schemas/common.ts', kind: 'property', of: 'ID_PREFIXES', text: "PayoutId: 'po'" }],
    catchesOmission: { kind: 'tsc' },
    says: /"PayoutId"/,
  },
  {
    name: 'a migration for its tables',
    adds: ['db/migrations/PAYOUTS.sql'],
    catchesOmission: PAYOUTS_TEST,
    says: /relation "payouts" does not exist/,
  },
  {
    name: 'its problem type',
    edits: [
      {
        file: 'src/schemas/problem-types.ts',
        kind: 'property',
        of: 'PROBLEM_TYPES',
        text:
          "'payout-exceeds-balance': { status: 422, title: 'The payout exceeds the balance', description: 'the " +
          "balance does not hold the amount. Not recorded, so the key may carry a corrected amount.' }",
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /"payout-exceeds-balance"/,
  },
  {
    name: 'the processor operation at the boundary',
    edits: [
      {
        file: 'src/processor/processor.ts',
        kind: 'before',
        of: 'Operations',
        text:
          'export interface PayoutRequest {\n  amountCents: number\n  currency: string\n  accountId: string\n  ' +
          'idempotencyKey: string\n}\n\n' +
          "export type PayoutOutcome = { status: 'paid'; processorReference: string } | { status: 'failed'; " +
          'failureCode: string; failureMessage: string }\n\n',
      },
      {
        file: 'src/processor/processor.ts',
        kind: 'member',
        of: 'Operations',
        text: 'payout: { request: PayoutRequest; outcome: PayoutOutcome }',
      },
      {
        file: 'src/processor/processor.ts',
        kind: 'member',
        of: 'PaymentProcessor',
        text: 'payout(request: PayoutRequest): Promise<PayoutOutcome>',
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /PayoutRequest|PayoutOutcome|Property 'payout' does not exist/,
  },
  {
    name: 'the operation among the methods every wrapper wraps',
    edits: [{ file: 'src/processor/processor.ts', kind: 'element', of: 'PROCESSOR_METHODS', text: "'payout'" }],
    catchesOmission: { kind: 'tsc' },
    says: /add payout to PROCESSOR_METHODS/,
  },
  {
    name: 'the simulated processor pays out',
    edits: [
      {
        file: 'src/processor/simulated.ts',
        kind: 'property',
        of: 'createSimulatedProcessor',
        besides: 'refund',
        text:
          'payout: async ({ amountCents, currency, idempotencyKey }) =>\n' +
          "      (await perform<PayoutOutcome>(sql, { idempotencyKey, kind: 'payout', parameters: { amount_cents: " +
          "amountCents, currency } }, () => ({ status: 'paid', processorReference: reference('sim_po', " +
          'idempotencyKey) }))).outcome',
      },
      { file: 'src/processor/simulated.ts', kind: 'import', from: './processor.js', names: ['type PayoutOutcome'] },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /Property 'payout' is missing[\s\S]*simulated|simulated\.ts[\s\S]*Property 'payout' is missing/,
  },
  {
    name: 'the Stripe processor pays out, and finds a payout it lost the answer to',
    edits: [
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'property',
        of: 'createStripeProcessor',
        besides: 'refund',
        text:
          'async payout(request) {\n' +
          '      const params = { amount: request.amountCents, currency: request.currency, metadata: ' +
          'metadataOf(request) }\n' +
          '      return payoutOutcome(await call(() => stripe.payouts.create(params, { idempotencyKey: ' +
          'request.idempotencyKey })))\n' +
          '    }',
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'case',
        of: 'lookup',
        text:
          "        case 'payout': {\n" +
          '          const created = { gte: Math.floor(lookup.notBefore.getTime() / 1000) - CLOCK_MARGIN_SECONDS }\n' +
          '          const found = await call(async () => {\n' +
          '            for await (const each of stripe.payouts.list({ created, limit: 100 })) if ' +
          '(each.metadata?.operation_id === lookup.request.idempotencyKey) return each\n' +
          '            return undefined\n' +
          '          })\n' +
          "          return found && { kind: 'payout', outcome: payoutOutcome(found) }\n" +
          '        }\n',
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'append',
        text:
          'function payoutOutcome(payout: Stripe.Payout): PayoutOutcome {\n' +
          "  if (payout.status === 'failed') return { status: 'failed', failureCode: payout.failure_code ?? " +
          "'failed', failureMessage: payout.failure_message ?? 'The payout failed.' }\n" +
          "  return { status: 'paid', processorReference: payout.id }\n}\n",
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'import',
        from: '../processor.js',
        names: ['type PayoutOutcome'],
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /stripe\.ts[\s\S]*(Property 'payout' is missing|'payout')/,
  },
  {
    name: 'a processor contract case for the operation',
    adds: ['test/processor/contract-cases/payouts.ts'],
    edits: [{ file: 'test/processor/contract.test.ts', kind: 'property', of: 'KINDS', text: 'payout: true' }],
    catchesOmission: { kind: 'tsc' },
    says: /Property 'payout' is missing/,
  },
  {
    name: 'its SQL: the repository',
    adds: ['src/payouts/repository.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '\.\/repository\.js'|Cannot find module '\.\.\/payouts\/repository\.js'/,
  },
  {
    name: 'its phases: reserve, call out, record',
    adds: ['src/payouts/payouts.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '(\.\/|\.\.\/payouts\/)payouts\.js'/,
  },
  {
    name: 'its events, declared once with what they carry',
    edits: [
      { file: 'src/schemas/webhook.ts', kind: 'import', from: './payout.js', names: ['Payout'] },
      {
        file: 'src/schemas/webhook.ts',
        kind: 'before',
        of: 'EVENT_DATA',
        text:
          "const PayoutData = Type.Object({ object: Payout }, { description: '`object`: the payout as the API " +
          "returned it at that moment.' })\n",
      },
      { file: 'src/schemas/webhook.ts', kind: 'property', of: 'EVENT_DATA', text: "'payout.paid': PayoutData" },
      { file: 'src/schemas/webhook.ts', kind: 'property', of: 'EVENT_DATA', text: "'payout.failed': PayoutData" },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /"payout\.paid"/,
  },
  {
    name: 'its Recovery, and its registration',
    adds: ['src/payouts/recovery.ts'],
    edits: [
      { file: 'src/recovery/registry.ts', kind: 'import', from: '../payouts/recovery.js', names: ['payoutRecovery'] },
      { file: 'src/recovery/registry.ts', kind: 'element', of: 'recoveries', text: 'payoutRecovery(processor, sql)' },
    ],
    catchesOmission: PAYOUTS_TEST,
    says: /POST \/v1\/payouts answers processor-unavailable but has no Recovery: register one in src\/recovery/,
  },
  {
    name: 'its routes, registered under /v1',
    adds: ['src/routes/payouts.ts'],
    edits: [
      { file: 'src/app.ts', kind: 'import', from: './routes/payouts.js', names: ['default as payoutRoutes'] },
      {
        file: 'src/app.ts',
        kind: 'statement',
        after: { call: 'register', argument: 'refundRoutes' },
        text: 'await v1.register(payoutRoutes, { sql, processor, clock })',
      },
    ],
    catchesOmission: PAYOUTS_TEST,
    says: /No route for POST \/v1\/payouts/,
  },
  {
    name: 'openapi.yaml built again',
    runs: { command: 'npm run --silent openapi', makes: 'openapi.yaml' },
    catchesOmission: { kind: 'vitest', files: ['test/openapi.test.ts'] },
    says: /openapi\.yaml is stale: run `npm run openapi`/,
  },
  {
    name: 'the client’s types',
    edits: [
      {
        file: 'src/client/types.ts',
        kind: 'export',
        from: '../schemas/payout.js',
        names: ['CreatePayoutBody', 'Payout'],
      },
    ],
    catchesOmission: { kind: 'vitest', files: ['test/client/types.test.ts'] },
    says: /src\/client\/types\.ts exports no type for (Payout|CreatePayout)/,
  },
  {
    name: 'the client’s methods, and their exercise in the client test',
    adds: ['test/client/exercises/payouts.ts'],
    edits: [
      { file: 'src/client/client.ts', kind: 'import', from: './types.js', names: ['CreatePayoutBody', 'Payout'] },
      {
        file: 'src/client/client.ts',
        kind: 'property',
        of: 'createClient',
        besides: 'webhookEndpoints',
        text:
          'payouts: {\n' +
          "      create: (body: CreatePayoutBody, options?: IdempotentCallOptions) => post<Payout>('/v1/payouts', " +
          'body, options),\n' +
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the code a forker writes, a template literal in it
          '      retrieve: (payoutId: string, options?: CallOptions) => get<Payout>(`/v1/payouts/${id(payoutId)}`, ' +
          'undefined, options),\n' +
          "      list: (query?: object, options?: CallOptions) => get<List<Payout>>('/v1/payouts', query, options),\n" +
          '    }',
      },
    ],
    catchesOmission: { kind: 'vitest', files: ['test/client/client.test.ts'] },
    says: /\/v1\/payouts/,
  },
  {
    name: 'the client package’s types',
    edits: [
      {
        file: 'scripts/client-package/build.ts',
        kind: 'import',
        from: '../../src/schemas/payout.js',
        names: ['CreatePayoutBody', 'Payout'],
      },
      { file: 'scripts/client-package/build.ts', kind: 'property', of: 'SCHEMAS', text: 'Payout' },
      { file: 'scripts/client-package/build.ts', kind: 'property', of: 'SCHEMAS', text: 'CreatePayoutBody' },
    ],
    catchesOmission: { kind: 'vitest', files: ['test/client/package.test.ts'] },
    says: /has no exported member '(Payout|CreatePayoutBody)'/,
  },
  {
    name: 'what the contract tests cannot make from a request: a funded balance, a payout id',
    adds: ['test/contract-fixtures/payouts.ts'],
    catchesOmission: { kind: 'vitest', files: ['test/contract-requests.test.ts'] },
    says: /prepare\.createPayout|no fixture makes a PayoutId/,
  },
  {
    name: 'its own test',
    adds: ['test/payouts/payouts.test.ts'],
    catchesOmission: { kind: 'vitest', files: ['test/payouts/payouts.test.ts'] },
    says: /No test files found|No test suite found/,
  },
]
