// The offline Adyen server (test/helpers/adyen), driven only through the official @adyen/api-library, as the
// service will drive Adyen: a payment, its modifications answered `received` and decided later by notifications,
// 3-D Secure, refusals, idempotent replays, faults; each notification checked with the library's own HMAC
// validator, an implementation that is not the server's.
import { createServer, type Server } from 'node:http'
import {
  CheckoutAPI,
  Client,
  Config,
  EnvironmentEnum,
  type HttpClientException,
  hmacValidator,
} from '@adyen/api-library'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { transportTo } from '../../src/processor/adyen/transport.js'
import type { NotificationItem } from '../helpers/adyen/notifications.js'
import { type AdyenTestServer, startAdyenServer } from '../helpers/adyen/server.js'
import { startScript } from '../helpers/processes.js'
import { freePort, until } from '../helpers/system.js'

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056'
const CARD = { type: 'scheme', number: '4111111111111111', expiryMonth: '03', expiryYear: '2030', cvc: '737' } as const

let adyen: AdyenTestServer
let checkout: CheckoutAPI
let receiver: Server
/** Every batch the receiver got, as parsed; `answer` is what it says back. */
const batches: { items: NotificationItem[] }[] = []
let answer = '[accepted]'

beforeAll(async () => {
  adyen = await startAdyenServer()
  const client = new Client(
    new Config({ apiKey: adyen.apiKey, environment: EnvironmentEnum.TEST }),
    transportTo(adyen.url),
  )
  checkout = new CheckoutAPI(client)
  receiver = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk) => (body += chunk))
    request.on('end', () => {
      const parsed = JSON.parse(body) as { notificationItems: { NotificationRequestItem: NotificationItem }[] }
      batches.push({ items: parsed.notificationItems.map((wrapper) => wrapper.NotificationRequestItem) })
      response.writeHead(200, { 'content-type': 'text/plain' }).end(answer)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
  adyen.notifications.endpoint(`http://127.0.0.1:${(receiver.address() as { port: number }).port}/`, HMAC_KEY)
})
afterEach(async () => {
  adyen.clearFaults()
  adyen.notifications.clearFaults()
  answer = '[accepted]'
  await adyen.notifications.idle()
})
afterAll(async () => {
  await adyen?.close()
  receiver?.close()
})

const received = () => batches.flatMap((batch) => batch.items)
const notificationsOf = (psp: string) =>
  received().filter((item) => item.pspReference === psp || item.originalReference === psp)
const codesOf = (psp: string) => notificationsOf(psp).map((item) => `${item.eventCode}:${item.success}`)

/** A card payment of `value` cents, as the specification's card-direct example. */
const paymentBody = (value: number, reference = `order-${Math.random()}`, card: Record<string, string> = {}) => ({
  amount: { currency: 'USD', value },
  reference,
  paymentMethod: { ...CARD, ...card } as never,
  merchantAccount: adyen.merchantAccount,
  returnUrl: 'https://shop.example/return',
})
async function pay(extra: Record<string, unknown> = {}, card: Record<string, string> = {}) {
  return checkout.PaymentsApi.payments(
    { ...paymentBody(1000, undefined, card), ...extra },
    { idempotencyKey: crypto.randomUUID() },
  )
}
const manual = { additionalData: { manualCapture: 'true' } }

describe('payments', () => {
  it('when a card is authorised with manual capture, then the answer says Authorised and an AUTHORISATION notification follows, signed so that the library validates it', async () => {
    const payment = await pay(manual)
    expect(payment.resultCode).toBe('Authorised')
    expect(payment.pspReference).toMatch(/^[A-Z0-9]{16}$/)
    await until(async () => codesOf(payment.pspReference!).length === 1)
    const [item] = notificationsOf(payment.pspReference!)
    expect(item).toMatchObject({
      eventCode: 'AUTHORISATION',
      success: 'true',
      merchantAccountCode: adyen.merchantAccount,
      amount: { value: 1000, currency: 'USD' },
      operations: ['CANCEL', 'CAPTURE', 'REFUND'],
    })
    expect(new hmacValidator().validateHMAC(item as never, HMAC_KEY)).toBe(true)
    expect(
      new hmacValidator().validateHMAC({ ...item, amount: { value: 1, currency: 'USD' } } as never, HMAC_KEY),
    ).toBe(false)
  })

  it('when the holder name asks for a refusal, then the answer is Refused with the documented reason and code', async () => {
    const declined = await pay({}, { holderName: 'DECLINED' })
    expect([declined.resultCode, declined.refusalReason, declined.refusalReasonCode]).toEqual([
      'Refused',
      'Refused',
      '2',
    ])
    const poor = await pay({}, { holderName: 'NOT_ENOUGH_BALANCE' })
    expect([poor.resultCode, poor.refusalReason, poor.refusalReasonCode]).toEqual([
      'Refused',
      'Not enough balance',
      '12',
    ])
    await until(async () => codesOf(poor.pspReference!).length === 1)
    expect(notificationsOf(poor.pspReference!)[0]).toMatchObject({ success: 'false', reason: 'Not enough balance' })
  })

  it('when the card asks for 3-D Secure, then the answer is a redirect action, and /payments/details completes it after the shopper returns', async () => {
    const payment = await pay(manual, { number: '4917610000000000' })
    expect(payment.resultCode).toBe('RedirectShopper')
    expect(payment.action).toMatchObject({ type: 'redirect', method: 'GET', paymentMethodType: 'scheme' })
    const back = await fetch(`${(payment.action as { url: string }).url}?result=authenticated`, { redirect: 'manual' })
    expect(back.status).toBe(302)
    const returned = new URL(back.headers.get('location')!)
    expect(returned.origin + returned.pathname).toBe('https://shop.example/return')
    const details = await checkout.PaymentsApi.paymentsDetails({
      details: { redirectResult: returned.searchParams.get('redirectResult')! },
    })
    expect([details.resultCode, details.pspReference]).toEqual(['Authorised', payment.pspReference])

    const failing = await pay(manual, { number: '5454545454545454' })
    const refused = await checkout.PaymentsApi.paymentsDetails({
      details: { redirectResult: adyen.later.authenticate(failing.pspReference!, false) },
    })
    expect([refused.resultCode, refused.refusalReason]).toEqual(['Refused', '3D Not Authenticated'])
  })

  it('when a payment is answered Received, then its AUTHORISATION notification decides it later', async () => {
    const payment = await pay(manual, { holderName: 'PENDING' })
    expect(payment.resultCode).toBe('Received')
    expect(codesOf(payment.pspReference!)).toEqual([])
    adyen.later.settle(payment.pspReference!, true)
    await until(async () => codesOf(payment.pspReference!).length === 1)
    expect(codesOf(payment.pspReference!)).toEqual(['AUTHORISATION:true'])
  })

  it('when a request is refused before it runs, then the library throws the ServiceError: a bad key 401, an unknown merchant 422 901, a bad card 422 101', async () => {
    const stranger = new CheckoutAPI(
      new Client(new Config({ apiKey: 'AQE_wrong', environment: EnvironmentEnum.TEST }), transportTo(adyen.url)),
    )
    const errorOf = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: HttpClientException) => [error.statusCode, error.errorCode],
      )
    expect(await errorOf(stranger.PaymentsApi.payments({} as never))).toEqual([401, '000'])
    expect(await errorOf(pay({ merchantAccount: 'Nobody' }))).toEqual([422, '901'])
    expect(await errorOf(pay({}, { number: '4111111111111112' }))).toEqual([422, '101'])
    expect(await errorOf(pay({ returnUrl: undefined }))).toEqual([422, '14_030'])
  })
})

describe('modifications, answered received and decided later', () => {
  it('when a capture is asked for, then it is received at once, and CAPTURE comes only once Adyen decides; a second capture fails', async () => {
    const payment = await pay(manual)
    const psp = payment.pspReference!
    const capture = await checkout.ModificationsApi.captureAuthorisedPayment(
      psp,
      { amount: { currency: 'USD', value: 600 }, merchantAccount: adyen.merchantAccount, reference: 'cap-1' },
      { idempotencyKey: `capture:${psp}` },
    )
    expect(capture).toMatchObject({ status: 'received', paymentPspReference: psp, amount: { value: 600 } })
    expect(capture.pspReference).not.toBe(psp)
    await until(async () => codesOf(psp).length === 1)
    expect(codesOf(psp)).toEqual(['AUTHORISATION:true'])

    adyen.later.decide(capture.pspReference)
    await until(async () => codesOf(psp).length === 2)
    expect(notificationsOf(psp)[1]).toMatchObject({
      eventCode: 'CAPTURE',
      success: 'true',
      pspReference: capture.pspReference,
      originalReference: psp,
      amount: { value: 600, currency: 'USD' },
    })
    const again = await checkout.ModificationsApi.captureAuthorisedPayment(
      psp,
      { amount: { currency: 'USD', value: 400 }, merchantAccount: adyen.merchantAccount },
      { idempotencyKey: `capture-again:${psp}` },
    )
    adyen.later.decide(again.pspReference)
    await until(async () => codesOf(psp).length === 3)
    expect(codesOf(psp)[2]).toBe('CAPTURE:false')
  })

  it('when refunds are asked for, then each is decided by REFUND, and one over what is left fails', async () => {
    const payment = await pay()
    const psp = payment.pspReference!
    const refund = (value: number) =>
      checkout.ModificationsApi.refundCapturedPayment(
        psp,
        { amount: { currency: 'USD', value }, merchantAccount: adyen.merchantAccount },
        { idempotencyKey: crypto.randomUUID() },
      )
    await refund(700)
    await refund(400)
    adyen.later.decideAll()
    await until(async () => codesOf(psp).length === 3)
    expect(codesOf(psp)).toEqual(['AUTHORISATION:true', 'REFUND:true', 'REFUND:false'])
  })

  it('when Adyen’s test names make a capture or a refund fail after it succeeded, then CAPTURE_FAILED or REFUND_FAILED follows', async () => {
    const capturing = await pay(manual, { holderName: 'capture failed' })
    const capture = await checkout.ModificationsApi.captureAuthorisedPayment(capturing.pspReference!, {
      amount: { currency: 'USD', value: 1000 },
      merchantAccount: adyen.merchantAccount,
    })
    adyen.later.decide(capture.pspReference)
    const refunding = await pay({}, { holderName: 'refund failed' })
    const refund = await checkout.ModificationsApi.refundCapturedPayment(refunding.pspReference!, {
      amount: { currency: 'USD', value: 300 },
      merchantAccount: adyen.merchantAccount,
    })
    adyen.later.decide(refund.pspReference)
    await until(
      async () => codesOf(capturing.pspReference!).length === 3 && codesOf(refunding.pspReference!).length === 3,
    )
    expect(codesOf(capturing.pspReference!)).toEqual(['AUTHORISATION:true', 'CAPTURE:true', 'CAPTURE_FAILED:true'])
    expect(codesOf(refunding.pspReference!)).toEqual(['AUTHORISATION:true', 'REFUND:true', 'REFUND_FAILED:true'])
  })

  it('when a reversal or a cancel is asked for, then an uncaptured payment is cancelled and a captured one refunded in full', async () => {
    const open = await pay(manual)
    const cancel = await checkout.ModificationsApi.cancelAuthorisedPaymentByPspReference(open.pspReference!, {
      merchantAccount: adyen.merchantAccount,
    })
    const captured = await pay()
    const reversal = await checkout.ModificationsApi.refundOrCancelPayment(captured.pspReference!, {
      merchantAccount: adyen.merchantAccount,
    })
    adyen.later.decide(cancel.pspReference)
    adyen.later.decide(reversal.pspReference)
    await until(async () => codesOf(open.pspReference!).length === 2 && codesOf(captured.pspReference!).length === 2)
    expect(notificationsOf(open.pspReference!)[1]).toMatchObject({ eventCode: 'CANCELLATION', success: 'true' })
    expect(notificationsOf(captured.pspReference!)[1]).toMatchObject({
      eventCode: 'CANCEL_OR_REFUND',
      success: 'true',
      amount: { value: 1000 },
      additionalData: { 'modification.action': 'refund' },
    })
  })

  it('when a payment is charged back, then NOTIFICATION_OF_CHARGEBACK and CHARGEBACK follow', async () => {
    const payment = await pay()
    adyen.later.chargeback(payment.pspReference!)
    await until(async () => codesOf(payment.pspReference!).length === 3)
    expect(codesOf(payment.pspReference!).slice(1)).toEqual(['NOTIFICATION_OF_CHARGEBACK:true', 'CHARGEBACK:true'])
  })
})

describe('idempotency and faults', () => {
  it('when the answer is lost after the payment was made, then a retry with the same key gets the first answer: one payment', async () => {
    const body = paymentBody(2500, 'lost-answer')
    const key = crypto.randomUUID()
    const before = adyen.book.payments.size
    adyen.fault({ path: /\/payments$/ }, { kind: 'drop-after' })
    await expect(checkout.PaymentsApi.payments(body, { idempotencyKey: key })).rejects.toThrow()
    const retried = await checkout.PaymentsApi.payments(body, { idempotencyKey: key })
    expect(adyen.book.payments.size).toBe(before + 1)
    expect(retried.pspReference).toBe([...adyen.book.payments.keys()].at(-1))
    const logged = adyen.requests.filter((request) => request.idempotencyKey === key)
    expect(logged.map((request) => [request.outcome, request.replayed])).toEqual([
      ['dropped', false],
      [200, true],
    ])
  })

  it('when two requests share a key at the same instant, then one payment is made and both get its answer', async () => {
    const key = crypto.randomUUID()
    adyen.fault({ path: /\/payments$/ }, { kind: 'delay', ms: 200, when: 'before' })
    const body = paymentBody(100, 'twice')
    const [first, second] = await Promise.all([
      checkout.PaymentsApi.payments(body, { idempotencyKey: key }),
      checkout.PaymentsApi.payments(body, { idempotencyKey: key }),
    ])
    expect(second.pspReference).toBe(first.pspReference)
  })

  it('when the receiver does not answer [accepted], then the batch is sent again until it does', async () => {
    answer = 'ok'
    const payment = await pay()
    await until(async () => adyen.notifications.deliveries.some((delivery) => delivery.attempt >= 2))
    answer = '[accepted]'
    await until(async () =>
      adyen.notifications.deliveries.some(
        (delivery) => delivery.accepted && delivery.items[0]!.pspReference === payment.pspReference,
      ),
    )
    expect(codesOf(payment.pspReference!).length).toBeGreaterThanOrEqual(2)
  })

  it('when notifications are held and released, then they come in one batch; dropped ones never come, doubled ones twice', async () => {
    adyen.notifications.fault(/^AUTHORISATION$/, 'hold', 2)
    const first = await pay()
    const second = await pay()
    expect(codesOf(first.pspReference!)).toEqual([])
    adyen.notifications.release('batch')
    await until(async () => batches.some((batch) => batch.items.length === 2))
    expect(batches.find((batch) => batch.items.length === 2)!.items.map((item) => item.pspReference)).toEqual([
      first.pspReference,
      second.pspReference,
    ])

    adyen.notifications.fault(/^AUTHORISATION$/, 'drop')
    adyen.notifications.fault(/^AUTHORISATION$/, 'duplicate')
    const dropped = await pay()
    const doubled = await pay()
    await until(async () => codesOf(doubled.pspReference!).length === 2)
    await adyen.notifications.idle()
    expect(codesOf(dropped.pspReference!)).toEqual([])
    expect(adyen.notifications.sent.filter((item) => item.pspReference === dropped.pspReference)).toHaveLength(1)
  })
})

describe('npm run adyen:test-server', () => {
  it('when started with a notification URL, then it prints the settings, and a capture it receives is decided by itself and notified', async () => {
    const port = await freePort()
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/`
    const script = await startScript(
      'scripts/adyen-test-server/main.ts',
      ['--port', String(port), '--notification-url', receiverUrl, '--hmac-key', HMAC_KEY, '--decide-after', '0.2'],
      {},
      /(ADYEN_API_URL=\S+ ADYEN_API_KEY=\S+ ADYEN_MERCHANT_ACCOUNT=\S+ ADYEN_HMAC_KEY=\S+)/,
      'adyen:test-server',
    )
    try {
      const settings = Object.fromEntries(script.url.split(' ').map((pair) => pair.split('=') as [string, string]))
      expect(settings.ADYEN_API_URL).toBe(`http://127.0.0.1:${port}`)
      const local = new CheckoutAPI(
        new Client(
          new Config({ apiKey: settings.ADYEN_API_KEY, environment: EnvironmentEnum.TEST }),
          transportTo(settings.ADYEN_API_URL!),
        ),
      )
      const payment = await local.PaymentsApi.payments({
        amount: { currency: 'EUR', value: 4200 },
        reference: 'from-the-cli',
        paymentMethod: { ...CARD, holderName: 'APPROVED' } as never,
        merchantAccount: settings.ADYEN_MERCHANT_ACCOUNT!,
        returnUrl: 'https://shop.example/return',
        additionalData: { manualCapture: 'true' },
      })
      await local.ModificationsApi.captureAuthorisedPayment(payment.pspReference!, {
        amount: { currency: 'EUR', value: 4200 },
        merchantAccount: settings.ADYEN_MERCHANT_ACCOUNT!,
      })
      await until(async () => codesOf(payment.pspReference!).length === 2)
      expect(codesOf(payment.pspReference!)).toEqual(['AUTHORISATION:true', 'CAPTURE:true'])
      for (const item of notificationsOf(payment.pspReference!))
        expect(new hmacValidator().validateHMAC(item as never, settings.ADYEN_HMAC_KEY!)).toBe(true)
    } finally {
      script.child.kill('SIGTERM')
      await script.exited
    }
  })
})
