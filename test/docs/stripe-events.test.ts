// The events docs/later-outcomes.md tells a reader to send to the service's endpoint at Stripe are the ones the service
// reads (src/processor/stripe/later-outcomes.ts FOLLOWED_EVENTS): one left out of the page is one a deployment never
// receives (charge.dispute.funds_withdrawn was, and every dispute's money with it), one extra is noise.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { FOLLOWED_EVENTS } from '../../src/processor/stripe/later-outcomes.js'

const page = await readFile(new URL('../../docs/later-outcomes.md', import.meta.url), 'utf8')

describe('docs/later-outcomes.md, the events to send', () => {
  it('when the page lists the events of the Dashboard’s endpoint, then it names each event the service reads, and no other', () => {
    const paragraph = page.slice(page.indexOf('**Dashboard**'), page.indexOf('```', page.indexOf('**Dashboard**')))
    const named = [...paragraph.matchAll(/`([a-z_]+(?:\.[a-z_]+)+)`/g)].map((match) => match[1]!)
    expect([...new Set(named)].sort()).toEqual([...FOLLOWED_EVENTS].sort())
  })
})
