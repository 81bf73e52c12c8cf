// docs/high-availability.md tells an operator on pg_auto_failover 2.0 how to switch over without its monitor's race;
// the failover test and the fault run switch over with SWITCHOVER_SQL. They must be the same statements.
import { readFile } from 'node:fs/promises'
import { expect, it } from 'vitest'
import { SWITCHOVER_SQL } from '../helpers/auto-failover.js'

it('the switchover the failover test and the fault run perform is the one docs/high-availability.md gives', async () => {
  const page = await readFile(new URL('../../docs/high-availability.md', import.meta.url), 'utf8')
  const blocks = [...page.matchAll(/```sql\n([\s\S]*?)\n```/g)].map((match) => match[1])
  expect(blocks).toContain(SWITCHOVER_SQL)
})
