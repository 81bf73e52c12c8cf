// The checklist of docs/extending.md as edits a forker makes to add payouts (a money-moving resource against a
// balance), each with the check of the template that catches it when it is forgotten, and the words that check
// must say. npm run check:template (check.ts) applies them all to a copy of the repository and runs the checks
// (all pass), then leaves each step out in turn (its check must fail, saying those words).
export type Check = { kind: 'tsc' } | { kind: 'vitest'; files: string[] }

export interface Edit {
  /** A file of the repository, changed where `find` first occurs: `text` goes before it, after it, or instead. */
  file: string
  find: string
  text: string
  at?: 'before' | 'after' | 'instead'
}

export interface Step {
  name: string
  /** New files, copied from test/template/payouts (same paths). */
  adds?: string[]
  edits?: Edit[]
  /** A command to run once the edits are made (npm run openapi). */
  runs?: string
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
    edits: [{ file: 'src/schemas/common.ts', find: " WebhookDeliveryId: 'wd'", text: " PayoutId: 'po'," }],
    catchesOmission: { kind: 'tsc' },
    says: /"PayoutId"/,
  },
  {
    name: 'a migration for its tables',
    adds: ['db/migrations/PAYOUTS.sql'],
    catchesOmission: PAYOUTS_TEST,
    says: /relation "(balances|payouts)" does not exist/,
  },
  {
    name: 'its problem type',
    edits: [
      {
        file: 'src/schemas/problem-types.ts',
        find: "  'processor-refused': {",
        text: "  'payout-exceeds-balance': { status: 422, title: 'The payout exceeds the balance', description: 'the balance does not hold the amount. Not recorded, so the key may carry a corrected amount.' },\n",
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
        find: '/**\n * Every kind of operation the processor performs',
        text:
          'export interface PayoutRequest {\n  amountCents: number\n  currency: string\n  accountId: string\n  idempotencyKey: string\n}\n\n' +
          "export type PayoutOutcome = { status: 'paid'; processorReference: string } | { status: 'failed'; failureCode: string; failureMessage: string }\n\n",
      },
      { file: 'src/processor/processor.ts', find: '  refund: { request: RefundRequest; outcome: RefundOutcome }\n', text: '  payout: { request: PayoutRequest; outcome: PayoutOutcome }\n', at: 'after' },
      { file: 'src/processor/processor.ts', find: '  refund(request: RefundRequest): Promise<RefundOutcome>\n', text: '  payout(request: PayoutRequest): Promise<PayoutOutcome>\n', at: 'after' },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /PayoutRequest|PayoutOutcome|Property 'payout' does not exist/,
  },
  {
    name: 'the operation among the methods every wrapper wraps',
    edits: [{ file: 'src/processor/processor.ts', find: "'refund', 'lookup'] as const", text: "'refund', 'payout', 'lookup'] as const", at: 'instead' }],
    catchesOmission: { kind: 'tsc' },
    says: /add payout to PROCESSOR_METHODS/,
  },
  {
    name: 'the simulated processor pays out',
    edits: [
      {
        file: 'src/processor/simulated.ts',
        find: '    // Its ledger is read in the same database it was written to',
        text:
          "    payout: async ({ amountCents, currency, idempotencyKey }) =>\n" +
          "      (await perform<PayoutOutcome>(sql, idempotencyKey, 'payout', { amount_cents: amountCents, currency }, () => ({ status: 'paid', processorReference: reference('sim_po', idempotencyKey) }))).outcome,\n",
      },
      { file: 'src/processor/simulated.ts', find: '  type PaymentProcessor,', text: '  type PayoutOutcome,\n' },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /Property 'payout' is missing[\s\S]*simulated|simulated\.ts[\s\S]*Property 'payout' is missing/,
  },
  {
    name: 'the Stripe processor pays out, and finds a payout it lost the answer to',
    edits: [
      {
        file: 'src/processor/stripe/stripe.ts',
        find: '    async lookup(lookup: LookupRequest)',
        text:
          '    async payout(request) {\n' +
          '      const params = { amount: request.amountCents, currency: request.currency, metadata: metadataOf(request) }\n' +
          '      return payoutOutcome(await call(() => stripe.payouts.create(params, { idempotencyKey: request.idempotencyKey })))\n' +
          '    },\n',
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        find: '        default:\n          // A kind added to the boundary',
        text:
          "        case 'payout': {\n" +
          '          const created = { gte: Math.floor(lookup.notBefore.getTime() / 1000) - CLOCK_MARGIN_SECONDS }\n' +
          '          const found = await call(async () => {\n' +
          '            for await (const each of stripe.payouts.list({ created, limit: 100 })) if (each.metadata?.operation_id === lookup.request.idempotencyKey) return each\n' +
          '            return undefined\n' +
          '          })\n' +
          "          return found && { kind: 'payout', outcome: payoutOutcome(found) }\n" +
          '        }\n',
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        find: 'function metadataOf(',
        text:
          "function payoutOutcome(payout: Stripe.Payout): PayoutOutcome {\n" +
          "  if (payout.status === 'failed') return { status: 'failed', failureCode: payout.failure_code ?? 'failed', failureMessage: payout.failure_message ?? 'The payout failed.' }\n" +
          "  return { status: 'paid', processorReference: payout.id }\n}\n\n",
      },
      { file: 'src/processor/stripe/stripe.ts', find: '  PaymentProcessor,\n  RefundRequest,', text: '  PayoutOutcome,\n' },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /stripe\.ts[\s\S]*(Property 'payout' is missing|'payout')/,
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
      { file: 'src/schemas/webhook.ts', find: "import { Refund } from './refund.js'", text: "import { Payout } from './payout.js'\n" },
      {
        file: 'src/schemas/webhook.ts',
        find: '/**\n * Every event type, with what its `data` holds',
        text: "const PayoutData = Type.Object({ object: Payout }, { description: '`object`: the payout as the API returned it at that moment.' })\n\n",
      },
      { file: 'src/schemas/webhook.ts', find: "  'charge.refunded': ChargeData,\n", text: "  'payout.paid': PayoutData,\n  'payout.failed': PayoutData,\n", at: 'after' },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /"payout\.paid"/,
  },
  {
    name: 'its Recovery, and its registration',
    adds: ['src/payouts/recovery.ts'],
    edits: [
      { file: 'src/recovery/registry.ts', find: "import { refundRecovery } from '../refunds/recovery.js'", text: "import { payoutRecovery } from '../payouts/recovery.js'\n" },
      { file: 'src/recovery/registry.ts', find: '    refundRecovery(processor, sql),\n', text: '    payoutRecovery(processor, sql),\n', at: 'after' },
    ],
    catchesOmission: PAYOUTS_TEST,
    says: /POST \/v1\/payouts answers processor-unavailable but has no Recovery: register one in src\/recovery\/registry\.ts/,
  },
  {
    name: 'its routes, registered under /v1',
    adds: ['src/routes/payouts.ts'],
    edits: [
      { file: 'src/app.ts', find: "import refundRoutes from './routes/refunds.js'", text: "import payoutRoutes from './routes/payouts.js'\n" },
      { file: 'src/app.ts', find: '      await v1.register(refundRoutes, { sql, processor })\n', text: '      await v1.register(payoutRoutes, { sql, processor })\n', at: 'after' },
    ],
    catchesOmission: PAYOUTS_TEST,
    says: /No route for POST \/v1\/payouts/,
  },
  {
    name: 'openapi.yaml built again',
    runs: 'npm run --silent openapi',
    catchesOmission: { kind: 'vitest', files: ['test/openapi.test.ts'] },
    says: /openapi\.yaml is stale: run `npm run openapi`/,
  },
  {
    name: 'the client’s types',
    edits: [{ file: 'src/client/types.ts', find: "import type { CreateRefundBody, ListRefundsQuery, Refund } from '../schemas/refund.js'", text: "export type { CreatePayoutBody, Payout } from '../schemas/payout.js'\n" }],
    catchesOmission: { kind: 'vitest', files: ['test/client/types.test.ts'] },
    says: /src\/client\/types\.ts exports no type for (Payout|CreatePayout)/,
  },
  {
    name: 'the client’s methods, and the client test that calls every operation',
    edits: [
      { file: 'src/client/client.ts', find: '  CreateRefundBody,\n', text: '  CreatePayoutBody,\n' },
      { file: 'src/client/client.ts', find: '  RedeliverBody,\n', text: '  Payout,\n' },
      {
        file: 'src/client/client.ts',
        find: '    webhookEndpoints: {',
        text:
          '    payouts: {\n' +
          "      create: (body: CreatePayoutBody, options?: IdempotentCallOptions) => post<Payout>('/v1/payouts', body, options),\n" +
          '      retrieve: (payoutId: string, options?: CallOptions) => get<Payout>(`/v1/payouts/${id(payoutId)}`, undefined, options),\n' +
          "      list: (query?: object, options?: CallOptions) => get<List<Payout>>('/v1/payouts', query, options),\n" +
          '    },\n',
      },
      {
        file: 'test/client/client.test.ts',
        find: '    const { client } = await newClient()\n    expect((await client.health.live())',
        text: '    const { client, accountId } = await newClient()\n    expect((await client.health.live())',
        at: 'instead',
      },
      {
        file: 'test/client/client.test.ts',
        find: "    const spec = parse(readFileSync(new URL('../../openapi.yaml', import.meta.url), 'utf8'))",
        text:
          "    await suite.context.sql`insert into balances (account_id, currency, available_cents) values (${accountId}, 'usd', 10000)`\n" +
          "    const paid = await client.payouts.create({ amount_cents: 1000, currency: 'usd' })\n" +
          '    expect((await client.payouts.retrieve(paid.data.id)).data).toEqual(paid.data)\n' +
          '    expect((await client.payouts.list()).data.data).toHaveLength(1)\n',
      },
    ],
    catchesOmission: { kind: 'vitest', files: ['test/client/client.test.ts'] },
    says: /\/v1\/payouts/,
  },
  {
    name: 'the client package’s types',
    edits: [
      { file: 'scripts/client-package/build.ts', find: "import { CreateRefundBody, ListRefundsQuery, Refund } from '../../src/schemas/refund.js'", text: "import { CreatePayoutBody, Payout } from '../../src/schemas/payout.js'\n" },
      { file: 'scripts/client-package/build.ts', find: '  Event,\n  EventType:', text: '  Payout,\n  CreatePayoutBody,\n' },
    ],
    catchesOmission: { kind: 'vitest', files: ['test/client/package.test.ts'] },
    says: /has no exported member '(Payout|CreatePayoutBody)'/,
  },
  {
    name: 'its own test',
    adds: ['test/payouts/payouts.test.ts'],
    catchesOmission: { kind: 'vitest', files: ['test/payouts/payouts.test.ts'] },
    says: /No test files found|No test suite found/,
  },
]
