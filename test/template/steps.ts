// The checklist of docs/extending.md as edits a forker makes to add withdrawals (a money-moving resource against a
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
  /** New files, copied from test/template/withdrawals (same paths). */
  adds?: string[]
  edits?: Edit[]
  /** A command to run once the edits are made (npm run openapi), and the files it makes (openapi.yaml, ...). */
  runs?: { command: string; makes: string[] }
  catchesOmission: Check
  /** What the check says when the step was forgotten. */
  says: RegExp
}

const WITHDRAWALS_TEST: Check = { kind: 'vitest', files: ['test/withdrawals/withdrawals.test.ts'] }

export const STEPS: Step[] = [
  {
    name: 'the schema of the resource and its bodies',
    adds: ['src/schemas/withdrawal.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '\.\.\/schemas\/withdrawal\.js'/,
  },
  {
    name: 'its id prefix, declared once',
    edits: [{ file: 'src/schemas/common.ts', kind: 'property', of: 'ID_PREFIXES', text: "WithdrawalId: 'wdr'" }],
    catchesOmission: { kind: 'tsc' },
    says: /"WithdrawalId"/,
  },
  {
    name: 'a migration for its tables',
    adds: ['db/migrations/WITHDRAWALS.sql'],
    catchesOmission: WITHDRAWALS_TEST,
    says: /relation "withdrawals" does not exist/,
  },
  {
    name: 'its problem type',
    edits: [
      {
        file: 'src/schemas/problem-types.ts',
        kind: 'property',
        of: 'PROBLEM_TYPES',
        text:
          "'withdrawal-exceeds-balance': { status: 422, title: 'The withdrawal exceeds the balance', " +
          "description: 'the balance does not hold the amount. Not recorded, so the key may carry a corrected " +
          "amount.' }",
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /"withdrawal-exceeds-balance"/,
  },
  {
    name: 'the processor operation at the boundary',
    edits: [
      {
        file: 'src/processor/processor.ts',
        kind: 'before',
        of: 'Operations',
        text:
          'export interface WithdrawalRequest {\n  amountCents: number\n  currency: string\n  accountId: string\n  ' +
          'processorAccount: string | null\n  idempotencyKey: string\n}\n\n' +
          "export type WithdrawalOutcome = { status: 'paid'; processorReference: string } | { status: 'failed'; " +
          'failureCode: string; failureMessage: string }\n\n',
      },
      {
        file: 'src/processor/processor.ts',
        kind: 'member',
        of: 'Operations',
        text: 'withdrawal: { request: WithdrawalRequest; outcome: WithdrawalOutcome }',
      },
      {
        file: 'src/processor/processor.ts',
        kind: 'member',
        of: 'PaymentProcessor',
        text: 'withdrawal(request: WithdrawalRequest): Promise<WithdrawalOutcome>',
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /WithdrawalRequest|WithdrawalOutcome|Property 'withdrawal' does not exist/,
  },
  {
    name: 'the operation among the methods every wrapper wraps',
    edits: [{ file: 'src/processor/processor.ts', kind: 'element', of: 'PROCESSOR_METHODS', text: "'withdrawal'" }],
    catchesOmission: { kind: 'tsc' },
    says: /add withdrawal to PROCESSOR_METHODS/,
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
          'withdrawal: async ({ amountCents, currency, idempotencyKey }) =>\n' +
          "      (await perform<WithdrawalOutcome>(sql, { idempotencyKey, kind: 'withdrawal', parameters: { " +
          "amount_cents: amountCents, currency } }, () => ({ status: 'paid', processorReference: " +
          "reference('sim_wdr', idempotencyKey) }))).outcome",
      },
      { file: 'src/processor/simulated.ts', kind: 'import', from: './processor.js', names: ['type WithdrawalOutcome'] },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /Property 'withdrawal' is missing[\s\S]*simulated|simulated\.ts[\s\S]*Property 'withdrawal' is missing/,
  },
  {
    name: 'the Stripe processor pays out, and finds a withdrawal it lost the answer to',
    edits: [
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'property',
        of: 'createStripeProcessor',
        besides: 'refund',
        text:
          'async withdrawal(request) {\n' +
          '      const params = { amount: request.amountCents, currency: request.currency, metadata: ' +
          'metadataOf(request) }\n' +
          '      return withdrawalOutcome(await call(() => stripeFor(request).payouts.create(params, { ' +
          'idempotencyKey: request.idempotencyKey })))\n' +
          '    }',
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'case',
        of: 'lookup',
        text:
          "        case 'withdrawal': {\n" +
          '          const created = { gte: Math.floor(lookup.notBefore.getTime() / 1000) - CLOCK_MARGIN_SECONDS }\n' +
          '          const found = await call(async () => {\n' +
          '            for await (const each of stripeFor(lookup.request).payouts.list({ created, limit: 100 })) if ' +
          '(each.metadata?.operation_id === lookup.request.idempotencyKey) return each\n' +
          '            return undefined\n' +
          '          })\n' +
          "          return found && { kind: 'withdrawal', outcome: withdrawalOutcome(found) }\n" +
          '        }\n',
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'append',
        text:
          'function withdrawalOutcome(withdrawal: Stripe.Payout): WithdrawalOutcome {\n' +
          "  if (withdrawal.status === 'failed') return { status: 'failed', failureCode: withdrawal.failure_code ?? " +
          "'failed', failureMessage: withdrawal.failure_message ?? 'The withdrawal failed.' }\n" +
          "  return { status: 'paid', processorReference: withdrawal.id }\n}\n",
      },
      {
        file: 'src/processor/stripe/stripe.ts',
        kind: 'import',
        from: '../processor.js',
        names: ['type WithdrawalOutcome'],
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /stripe\.ts[\s\S]*(Property 'withdrawal' is missing|'withdrawal')/,
  },
  {
    name: 'a processor contract case for the operation',
    adds: ['test/processor/contract-cases/withdrawals.ts'],
    edits: [{ file: 'test/processor/contract.test.ts', kind: 'property', of: 'KINDS', text: 'withdrawal: true' }],
    catchesOmission: { kind: 'tsc' },
    says: /Property 'withdrawal' is missing/,
  },
  {
    name: 'its SQL: the repository',
    adds: ['src/withdrawals/repository.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '\.\/repository\.js'|Cannot find module '\.\.\/withdrawals\/repository\.js'/,
  },
  {
    name: 'its phases: reserve, call out, record',
    adds: ['src/withdrawals/withdrawals.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '(\.\/|\.\.\/withdrawals\/)withdrawals\.js'/,
  },
  {
    name: 'its events, declared once with what they carry',
    edits: [
      { file: 'src/schemas/webhook.ts', kind: 'import', from: './withdrawal.js', names: ['Withdrawal'] },
      {
        file: 'src/schemas/webhook.ts',
        kind: 'before',
        of: 'EVENT_DATA',
        text:
          "const WithdrawalData = Type.Object({ object: Withdrawal }, { description: '`object`: the withdrawal as " +
          "the API returned it at that moment.' })\n",
      },
      { file: 'src/schemas/webhook.ts', kind: 'property', of: 'EVENT_DATA', text: "'withdrawal.paid': WithdrawalData" },
      {
        file: 'src/schemas/webhook.ts',
        kind: 'property',
        of: 'EVENT_DATA',
        text: "'withdrawal.failed': WithdrawalData",
      },
    ],
    catchesOmission: { kind: 'tsc' },
    says: /"withdrawal\.paid"/,
  },
  {
    name: 'its Recovery, named by its route',
    adds: ['src/withdrawals/recovery.ts'],
    catchesOmission: { kind: 'tsc' },
    says: /Cannot find module '\.\.\/withdrawals\/recovery\.js'/,
  },
  {
    name: 'its Recovery among the recovery worker’s',
    edits: [
      {
        file: 'src/recovery/registry.ts',
        kind: 'import',
        from: '../withdrawals/recovery.js',
        names: ['withdrawalRecovery'],
      },
      {
        file: 'src/recovery/registry.ts',
        kind: 'element',
        of: 'recoveries',
        text: 'withdrawalRecovery(processor, sql)',
      },
    ],
    catchesOmission: WITHDRAWALS_TEST,
    says: /POST \/v1\/withdrawals names the Recovery withdrawal, which the recovery worker does not have/,
  },
  {
    name: 'its routes, registered under /v1',
    adds: ['src/routes/withdrawals.ts'],
    edits: [
      { file: 'src/app.ts', kind: 'import', from: './routes/withdrawals.js', names: ['default as withdrawalRoutes'] },
      {
        file: 'src/app.ts',
        kind: 'statement',
        after: { call: 'register', argument: 'refundRoutes' },
        text: 'await v1.register(withdrawalRoutes, { sql, processor, clock })',
      },
    ],
    catchesOmission: WITHDRAWALS_TEST,
    says: /No route for POST \/v1\/withdrawals/,
  },
  {
    name: 'openapi.yaml built again',
    runs: { command: 'npm run --silent openapi', makes: ['openapi.yaml', 'src/client/api.ts'] },
    catchesOmission: { kind: 'vitest', files: ['test/openapi.test.ts'] },
    says: /openapi\.yaml is stale: run `npm run openapi`/,
  },
  {
    name: 'the client’s exercise in the client test',
    adds: ['test/client/exercises/withdrawals.ts'],
    catchesOmission: { kind: 'vitest', files: ['test/client/client.test.ts'] },
    says: /\/v1\/withdrawals/,
  },
  {
    name: 'what the contract tests cannot make from a request: a funded balance, a withdrawal id',
    adds: ['test/contract-fixtures/withdrawals.ts'],
    catchesOmission: { kind: 'vitest', files: ['test/contract-requests.test.ts'] },
    says: /prepare\.createWithdrawal|no fixture makes a WithdrawalId/,
  },
  {
    name: 'its own test',
    adds: ['test/withdrawals/withdrawals.test.ts'],
    catchesOmission: { kind: 'vitest', files: ['test/withdrawals/withdrawals.test.ts'] },
    says: /No test files found|No test suite found/,
  },
]
