import { describe, expect, it } from 'vitest'
import { chargeBody, controllableProcessor, countCharges, useTestApp } from '../helpers/app.js'
import { until } from '../helpers/system.js'

// The simulated processor, recording what it was asked, with a gate a test can close to hold a charge in
// flight, and a switch to make its next call time out (an outcome the service cannot know).
const processor = controllableProcessor()
const processorCalls = processor.calls
const suite = useTestApp({ processor: processor.factory })

const keyRow = async (accountId: string, key: string) => {
  const rows = await suite.context.sql`select * from idempotency_keys where account_id = ${accountId} and key = ${key}`
  return rows[0]
}

describe('replay', () => {
  it('when a completed request is retried, then the stored response comes back byte for byte, marked replayed', async () => {
    const user = await suite.context.newAccount()
    const first = await user.post('/v1/charges', chargeBody(), { key: 'replay-1' })
    const retry = await user.post('/v1/charges', chargeBody(), { key: 'replay-1' })

    expect(first.statusCode).toBe(201)
    expect(retry.statusCode).toBe(201)
    expect(retry.rawPayload.equals(first.rawPayload)).toBe(true)
    expect(retry.headers['content-type']).toBe(first.headers['content-type'])
    expect(retry.headers.location).toBe(first.headers.location)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when the response is recorded, then the body is stored as the exact bytes that were sent', async () => {
    const response = await suite.account.post('/v1/charges', chargeBody(), { key: 'stored-bytes' })
    const row = await keyRow(suite.account.id, 'stored-bytes')
    expect(row).toMatchObject({
      endpoint: 'POST /v1/charges',
      response_status: 201,
      claim_token: null,
      locked_until: null,
    })
    expect((row!.response_body as Buffer).equals(response.rawPayload)).toBe(true)
    expect(row!.response_headers).toEqual({
      'content-type': 'application/json; charset=utf-8',
      location: response.headers.location,
    })
  })

  it('when the retry differs only in key order and spacing, then it is a replay, not a 422', async () => {
    const first = await suite.account.post(
      '/v1/charges',
      '{"amount_cents":700,"currency":"eur","source":"pm_card_visa"}',
      { key: 'reorder' },
    )
    const retry = await suite.account.post(
      '/v1/charges',
      '{ "source": "pm_card_visa",\n  "currency": "eur", "amount_cents": 700 }',
      { key: 'reorder' },
    )
    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json().id).toBe(first.json().id)
  })

  it('when the key is sent as a quoted structured-field string, then it names the same key as the bare form', async () => {
    const first = await suite.account.post('/v1/charges', chargeBody(), { key: 'sf-form' })
    const retry = await suite.account.post('/v1/charges', chargeBody(), { key: '"sf-form"' })
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json().id).toBe(first.json().id)
  })

  it('when a declined charge is retried, then the 402 is replayed and no second charge is attempted', async () => {
    const decliner = await suite.context.newAccount('Decliner')
    const callsBefore = processorCalls.length
    const first = await decliner.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }), {
      key: 'declined',
    })
    const retry = await decliner.post('/v1/charges', chargeBody({ source: 'pm_card_chargeDeclined' }), {
      key: 'declined',
    })

    expect(first.statusCode).toBe(402)
    expect(retry.statusCode).toBe(402)
    expect(retry.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.rawPayload.equals(first.rawPayload)).toBe(true)
    expect(processorCalls.length - callsBefore).toBe(1)
    expect(await countCharges(suite.context.sql, decliner.id)).toBe(1)
  })
})

describe('replays remembered by the instance', () => {
  // Once a completed key has been replayed, this instance answers its replays from memory. The tests below take
  // the row away behind the service's back to show where an answer came from; the service never does that itself
  // (a completed key only changes once it has expired).
  it('when a replayed key is replayed again, then the same bytes come back without reading the database', async () => {
    const user = await suite.context.newAccount()
    const first = await user.post('/v1/charges', chargeBody(), { key: 'remembered' })
    const fromDatabase = await user.post('/v1/charges', chargeBody(), { key: 'remembered' })
    await suite.context.sql`delete from idempotency_keys where account_id = ${user.id} and key = 'remembered'`

    const fromMemory = await user.post('/v1/charges', chargeBody(), { key: 'remembered' })

    for (const replay of [fromDatabase, fromMemory]) {
      expect(replay.statusCode).toBe(201)
      expect(replay.rawPayload.equals(first.rawPayload)).toBe(true)
      expect(replay.headers['idempotent-replayed']).toBe('true')
      expect(replay.headers.location).toBe(first.headers.location)
    }
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when a remembered key comes with a different body, then 422, and nothing is charged', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody(), { key: 'remembered-422' })
    await user.post('/v1/charges', chargeBody(), { key: 'remembered-422' })
    await suite.context.sql`delete from idempotency_keys where account_id = ${user.id} and key = 'remembered-422'`
    const callsBefore = processorCalls.length

    const edited = await user.post('/v1/charges', chargeBody({ amount_cents: 4321 }), { key: 'remembered-422' })

    expect(edited.statusCode).toBe(422)
    expect(edited.json().type).toMatch(/\/idempotency-key-reused$/)
    expect(processorCalls.length).toBe(callsBefore)
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when another account replays the same key, then it never gets the remembered response', async () => {
    const [owner, other] = [await suite.context.newAccount(), await suite.context.newAccount()]
    const owners = await owner.post('/v1/charges', chargeBody(), { key: 'remembered-shared' })
    await owner.post('/v1/charges', chargeBody(), { key: 'remembered-shared' })

    const others = await other.post('/v1/charges', chargeBody(), { key: 'remembered-shared' })

    expect(others.statusCode).toBe(201)
    expect(others.headers['idempotent-replayed']).toBeUndefined()
    expect(others.json().id).not.toBe(owners.json().id)
    expect(await countCharges(suite.context.sql, other.id)).toBe(1)
  })

  it('when a key is within a minute of expiring, then it is not remembered, so its expiry frees it on time', async () => {
    const user = await suite.context.newAccount()
    await user.post('/v1/charges', chargeBody(), { key: 'remembered-expiring' })
    await suite.context
      .sql`update idempotency_keys set expires_at = now() + interval '30 seconds' where account_id = ${user.id} and
        key = 'remembered-expiring'`
    const replay = await user.post('/v1/charges', chargeBody(), { key: 'remembered-expiring' })
    expect(replay.headers['idempotent-replayed']).toBe('true')
    // The key expires (here at once, standing in for the 30 seconds passing).
    await suite.context
      .sql`update idempotency_keys set expires_at = now() - interval '1 second' where account_id = ${user.id} and key
        = 'remembered-expiring'`

    const reused = await user.post('/v1/charges', chargeBody({ amount_cents: 999 }), { key: 'remembered-expiring' })

    expect(reused.statusCode).toBe(201)
    expect(reused.headers['idempotent-replayed']).toBeUndefined()
    expect(await countCharges(suite.context.sql, user.id)).toBe(2)
  })
})

describe('conflicts', () => {
  it('when the same key comes with a different body, then 422 idempotency-key-reused and nothing new is charged', async () => {
    const spender = await suite.context.newAccount('Spender')
    await spender.post('/v1/charges', chargeBody({ amount_cents: 1000 }), { key: 'edited' })
    const edited = await spender.post('/v1/charges', chargeBody({ amount_cents: 10000 }), { key: 'edited' })

    expect(edited.statusCode).toBe(422)
    expect(edited.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(edited.json()).toMatchObject({ status: 422, title: 'This Idempotency-Key was used for a different request' })
    expect(edited.json().type).toMatch(/\/idempotency-key-reused$/)
    expect(await countCharges(suite.context.sql, spender.id)).toBe(1)
  })

  it('when the same key arrives while the first request is still running, then 409 with Retry-After, and the first still completes', async () => {
    const racer = await suite.context.newAccount('Racer')
    const slow = racer.post('/v1/charges', chargeBody({ source: 'pm_card_slow' }), { key: 'in-flight' })
    await until(async () => (await keyRow(racer.id, 'in-flight')) !== undefined)
    const collision = await racer.post('/v1/charges', chargeBody({ source: 'pm_card_slow' }), { key: 'in-flight' })

    expect(collision.statusCode).toBe(409)
    expect(collision.headers['retry-after']).toBe('1')
    expect(collision.json().type).toMatch(/\/idempotency-request-in-flight$/)
    expect((await slow).statusCode).toBe(201)
    const after = await racer.post('/v1/charges', chargeBody({ source: 'pm_card_slow' }), { key: 'in-flight' })
    expect(after.headers['idempotent-replayed']).toBe('true')
    expect(after.json().id).toBe((await slow).json().id)
    expect(await countCharges(suite.context.sql, racer.id)).toBe(1)
  })

  it('when 20 identical requests race, then exactly one charge exists and every 201 carries its id', async () => {
    const crowd = await suite.context.newAccount('Crowd')
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => crowd.post('/v1/charges', chargeBody(), { key: 'stampede' })),
    )

    const statuses = responses.map((response) => response.statusCode)
    expect(statuses.every((status) => status === 201 || status === 409)).toBe(true)
    const created = responses.filter((response) => response.statusCode === 201)
    expect(created.filter((response) => response.headers['idempotent-replayed'] === undefined)).toHaveLength(1)
    expect(new Set(created.map((response) => response.json().id)).size).toBe(1)
    expect(await countCharges(suite.context.sql, crowd.id)).toBe(1)
  })
})

describe('scope', () => {
  it('when two accounts use the same key, then each gets its own charge and neither sees the other’s', async () => {
    const [alice, bob] = [await suite.context.newAccount('Alice'), await suite.context.newAccount('Bob')]
    const forAlice = await alice.post('/v1/charges', chargeBody({ amount_cents: 111 }), { key: 'shared-key' })
    const forBob = await bob.post('/v1/charges', chargeBody({ amount_cents: 222 }), { key: 'shared-key' })

    expect(forAlice.statusCode).toBe(201)
    expect(forBob.statusCode).toBe(201)
    expect(forBob.headers['idempotent-replayed']).toBeUndefined()
    expect(forBob.json().amount_cents).toBe(222)
    expect(forBob.json().id).not.toBe(forAlice.json().id)
  })

  it('when one key is used on two endpoints, then they do not collide', async () => {
    const user = await suite.context.newAccount('Two endpoints')
    const charge = await user.post('/v1/charges', chargeBody(), { key: 'same-everywhere' })
    const refund = await user.post(
      `/v1/charges/${charge.json().id}/refunds`,
      { amount_cents: 100 },
      { key: 'same-everywhere' },
    )
    expect(refund.statusCode).toBe(201)
    expect(refund.json().object).toBe('refund')
  })
})

describe('the key header', () => {
  it('when the key is missing, then 400 idempotency-key-required and nothing is charged', async () => {
    const user = await suite.context.newAccount()
    const response = await user.post('/v1/charges', chargeBody(), { key: null })
    expect(response.statusCode).toBe(400)
    expect(response.headers['content-type']).toBe('application/problem+json; charset=utf-8')
    expect(response.json().type).toMatch(/\/idempotency-key-required$/)
    expect(await countCharges(suite.context.sql, user.id)).toBe(0)
  })

  it.each([
    ['256 characters long', 'k'.repeat(256)],
    ['not printable ASCII', 'schlüssel'],
    ['an empty quoted string', '""'],
  ])('when the key is %s, then 400 idempotency-key-invalid and nothing is charged', async (_case, key) => {
    const user = await suite.context.newAccount()
    const response = await user.post('/v1/charges', chargeBody(), { key })
    expect(response.statusCode).toBe(400)
    expect(response.json().type).toMatch(/\/idempotency-key-invalid$/)
    expect(await countCharges(suite.context.sql, user.id)).toBe(0)
  })

  it('when the key is empty, then 400 idempotency-key-invalid', async () => {
    const response = await suite.account.post('/v1/charges', chargeBody(), { key: '' })
    expect(response.statusCode).toBe(400)
    expect(response.json().type).toMatch(/\/idempotency-key-invalid$/)
  })
})

describe('what is not stored', () => {
  it('when the first attempt failed validation, then the same key may carry the corrected request', async () => {
    const user = await suite.context.newAccount()
    const invalid = await user.post('/v1/charges', chargeBody({ amount_cents: -5 }), { key: 'fix-and-retry' })
    const fixed = await user.post('/v1/charges', chargeBody({ amount_cents: 500 }), { key: 'fix-and-retry' })
    expect(invalid.statusCode).toBe(400)
    expect(fixed.statusCode).toBe(201)
    expect(fixed.headers['idempotent-replayed']).toBeUndefined()
  })

  it('when authentication fails, then no key is recorded', async () => {
    const response = await suite.context.app.inject({
      method: 'POST',
      url: '/v1/charges',
      headers: {
        authorization: 'Bearer sk_test_wrong',
        'idempotency-key': 'unauthenticated',
        'content-type': 'application/json',
      },
      payload: chargeBody(),
    })
    expect(response.statusCode).toBe(401)
    const [row] = await suite.context
      .sql`select count(*)::int as count from idempotency_keys where key = 'unauthenticated'`
    expect(row!.count).toBe(0)
  })

  it('when the processor times out, then nothing is recorded, and the unchanged retry reuses the operation id at once', async () => {
    const user = await suite.context.newAccount()
    processor.timeOutNext()
    const timedOut = await user.post('/v1/charges', chargeBody(), { key: 'outage' })
    expect(timedOut.statusCode).toBe(503)
    expect(timedOut.headers['retry-after']).toBe('5')
    expect(timedOut.json().type).toMatch(/\/processor-unavailable$/)
    expect(await countCharges(suite.context.sql, user.id)).toBe(0)
    const sentBefore = processorCalls.at(-1)!.idempotencyKey

    const retry = await user.post('/v1/charges', chargeBody(), { key: 'outage' })

    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    // The processor may have charged the first time: it must see the same key again, to dedupe.
    expect(processorCalls.at(-1)!.idempotencyKey).toBe(sentBefore)
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when the processor timed out, then the key stays bound to that request: an edited retry is 422', async () => {
    const user = await suite.context.newAccount()
    processor.timeOutNext()
    expect((await user.post('/v1/charges', chargeBody(), { key: 'outage-edit' })).statusCode).toBe(503)
    const edited = await user.post('/v1/charges', chargeBody({ amount_cents: 1 }), { key: 'outage-edit' })
    expect(edited.statusCode).toBe(422)
    expect(await countCharges(suite.context.sql, user.id)).toBe(0)
  })

  it('when the work fails before anything went downstream, then the key is forgotten and may carry another body', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 100 }))).json()
    const tooMuch = await user.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 500 }, { key: 'refund-retry' })
    expect(tooMuch.statusCode).toBe(422)
    expect(await keyRow(user.id, 'refund-retry')).toBeUndefined()
    expect(
      (await user.post(`/v1/charges/${charge.id}/refunds`, { amount_cents: 50 }, { key: 'refund-retry' })).statusCode,
    ).toBe(201)
  })

  it('when the 409 collision happens, then it leaves the original claim untouched', async () => {
    const user = await suite.context.newAccount()
    const slow = user.post('/v1/charges', chargeBody({ source: 'pm_card_slow' }), { key: 'untouched' })
    await until(async () => (await keyRow(user.id, 'untouched')) !== undefined)
    const before = await keyRow(user.id, 'untouched')
    expect(
      (await user.post('/v1/charges', chargeBody({ source: 'pm_card_slow' }), { key: 'untouched' })).statusCode,
    ).toBe(409)
    expect((await keyRow(user.id, 'untouched'))!.claim_token).toBe(before!.claim_token)
    expect((await slow).statusCode).toBe(201)
  })
})

describe('crash recovery and expiry', () => {
  it('when a claim was abandoned past its lease, then a retry takes it over with the same processor key and charges once', async () => {
    const user = await suite.context.newAccount()
    // A request that claimed the key and died: its lease ran out long ago and it never completed.
    const first = await user.post('/v1/charges', chargeBody(), { key: 'abandoned' })
    const operationId = (await keyRow(user.id, 'abandoned'))!.operation_id
    await suite.context.sql`delete from charges where id = ${first.json().id}`
    await suite.context.sql`
      update idempotency_keys set completed_at = null, response_status = null, response_headers = null, response_body
        = null,
        claim_token = gen_random_uuid(), locked_until = now() - interval '1 second'
      where account_id = ${user.id} and key = 'abandoned'`

    const retry = await user.post('/v1/charges', chargeBody(), { key: 'abandoned' })

    expect(retry.statusCode).toBe(201)
    expect(retry.headers['idempotent-replayed']).toBeUndefined()
    expect(processorCalls.at(-1)!.idempotencyKey).toBe(operationId)
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when an abandoned claim is retried with a different body, then 422, not a takeover', async () => {
    const user = await suite.context.newAccount()
    await suite.context.sql`
      insert into idempotency_keys (account_id, endpoint, key, fingerprint, operation_id, claim_token, locked_until,
        expires_at)
      values (${user.id}, 'POST /v1/charges', 'abandoned-other', decode(repeat('00', 32), 'hex'), gen_random_uuid(),
              gen_random_uuid(), now() - interval '1 second', now() + interval '1 day')`
    const response = await user.post('/v1/charges', chargeBody(), { key: 'abandoned-other' })
    expect(response.statusCode).toBe(422)
  })

  it('when a slow holder outlives its lease and is taken over, then its late commit is fenced off and one charge exists', async () => {
    const user = await suite.context.newAccount()
    const openGate = processor.holdNext()
    const stalled = user.post('/v1/charges', chargeBody(), { key: 'fenced' })
    await until(async () => (await keyRow(user.id, 'fenced')) !== undefined)
    await suite.context
      .sql`update idempotency_keys set locked_until = now() - interval '1 second' where account_id = ${user.id} and
        key = 'fenced'`

    const takeover = await user.post('/v1/charges', chargeBody(), { key: 'fenced' })
    openGate()
    const late = await stalled

    expect(takeover.statusCode).toBe(201)
    expect(late.statusCode).toBe(409)
    expect(late.json().type).toMatch(/\/idempotency-request-in-flight$/)
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
    const replay = await user.post('/v1/charges', chargeBody(), { key: 'fenced' })
    expect(replay.json().id).toBe(takeover.json().id)
  })

  it('when a key expires while its first request still runs, then the same request is told 409 and another 422, never handed the key', async () => {
    const user = await suite.context.newAccount()
    const openGate = processor.holdNext()
    const first = user.post('/v1/charges', chargeBody(), { key: 'expires-in-flight' })
    await until(async () => (await keyRow(user.id, 'expires-in-flight')) !== undefined)
    await suite.context
      .sql`update idempotency_keys set expires_at = now() - interval '1 second' where account_id = ${user.id} and key
        = 'expires-in-flight'`
    const callsBefore = processorCalls.length

    const other = await user.post('/v1/charges', chargeBody({ amount_cents: 77 }), { key: 'expires-in-flight' })
    const same = await user.post('/v1/charges', chargeBody(), { key: 'expires-in-flight' })
    openGate()

    expect(other.statusCode).toBe(422)
    expect(same.statusCode).toBe(409)
    expect(processorCalls.length).toBe(callsBefore)
    expect((await first).statusCode).toBe(201)
    expect(await countCharges(suite.context.sql, user.id)).toBe(1)
  })

  it('when a key has expired, then it names a new request, even before the reaper removes it', async () => {
    const user = await suite.context.newAccount()
    const first = await user.post('/v1/charges', chargeBody(), { key: 'expiring' })
    const before = await keyRow(user.id, 'expiring')
    await suite.context
      .sql`update idempotency_keys set expires_at = now() - interval '1 second' where id = ${before!.id}`

    const again = await user.post('/v1/charges', chargeBody({ amount_cents: 999 }), { key: 'expiring' })

    expect(again.statusCode).toBe(201)
    expect(again.headers['idempotent-replayed']).toBeUndefined()
    expect(again.json().id).not.toBe(first.json().id)
    const after = await keyRow(user.id, 'expiring')
    expect(after!.operation_id).not.toBe(before!.operation_id)
    expect(after!.expires_at.getTime()).toBeGreaterThan(Date.now())
    expect(await countCharges(suite.context.sql, user.id)).toBe(2)
  })
})
