// What the database holds a charge's amounts to, whatever the code does: refunds within what was captured, and never
// below zero (lost by 0006, mended by 0020).
import { describe, expect, it } from 'vitest'
import { chargeBody, useTestApp } from '../helpers/app.js'

const suite = useTestApp()

describe("a charge's amounts in the database", () => {
  it('when the refunded amount is set below zero or beyond what was captured, then the write is refused', async () => {
    const user = await suite.context.newAccount()
    const charge = (await user.post('/v1/charges', chargeBody({ amount_cents: 1000 }))).json()
    const set = (cents: number) =>
      suite.context.sql`update charges set amount_refunded_cents = ${cents} where id = ${charge.id}`.then(
        () => 'written',
        (error: { constraint_name?: string }) => error.constraint_name,
      )
    expect(await set(-1)).toBe('charges_amount_refunded_cents_check')
    expect(await set(1001)).toBe('charges_refunds_within_captured')
    expect(await set(1000)).toBe('written')
  })
})
