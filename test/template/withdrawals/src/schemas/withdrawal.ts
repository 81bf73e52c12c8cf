// The withdrawal resource and the body that creates it: money the account holds with the service, sent out.
import { Type, type Static } from 'typebox'
import { AmountCents, Currency, ResourceId, Text, Timestamp } from './common.js'
import { ListOf, PageQuery } from './page.js'

export const WithdrawalId = ResourceId('WithdrawalId')

export const CreateWithdrawalBody = Type.Object(
  { amount_cents: AmountCents, currency: Currency, description: Type.Optional(Text({ maxLength: 1000 })) },
  { title: 'CreateWithdrawal', additionalProperties: false },
)
export type CreateWithdrawalBody = Static<typeof CreateWithdrawalBody>

export const Withdrawal = Type.Object(
  {
    id: WithdrawalId,
    object: Type.Literal('withdrawal'),
    amount_cents: AmountCents,
    currency: Currency,
    description: Type.Union([Type.String(), Type.Null()]),
    status: Type.Enum(['pending', 'paid', 'failed', 'canceled'], {
      description:
        '`pending` from the moment its amount is taken from the balance until the processor’s answer is recorded; ' +
        '`failed`: the processor refused it, and its amount is back in the balance; `canceled`: it never reached ' +
        'the processor (its answer was lost, and it had not seen it), and its amount is back in the balance.',
    }),
    failure_code: Type.Union([Type.String(), Type.Null()]),
    processor_reference: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp,
  },
  { title: 'Withdrawal' },
)
export type Withdrawal = Static<typeof Withdrawal>
export const WithdrawalList = ListOf(Withdrawal)

export const WithdrawalParams = Type.Object({ id: WithdrawalId })
export const ListWithdrawalsQuery = Type.Object(PageQuery(WithdrawalId), { additionalProperties: false })
