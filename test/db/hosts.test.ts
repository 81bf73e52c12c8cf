import { describe, expect, it } from 'vitest'
import { withoutPassword } from '../../src/db/database.js'
import { parseHosts, urlParameter, withDatabase } from '../../src/db/hosts.js'

const FORMATION =
  'postgres://app:s3cret@node1:6001,node2,[::1]:6003/payments?target_session_attrs=read-write&sslmode=require'

describe('multi-host connection strings', () => {
  it('when a URL names several servers, then each is found in order, with 5432 where no port is given', () => {
    expect(parseHosts(FORMATION)).toEqual({
      hosts: [
        { host: 'node1', port: 6001 },
        { host: 'node2', port: 5432 },
        { host: '::1', port: 6003 },
      ],
      firstHostUrl: 'postgres://app:s3cret@node1:6001/payments?target_session_attrs=read-write&sslmode=require',
    })
  })

  it('when its parameters, database or password are asked for, then every host is kept', () => {
    expect(urlParameter(FORMATION, 'sslmode')).toBe('require')
    expect(urlParameter(FORMATION, 'channel_binding')).toBeUndefined()
    expect(withDatabase(FORMATION, 'payments_invoice_collector')).toBe(
      'postgres://app:s3cret@node1:6001,node2,[::1]:6003/payments_invoice_collector' +
        '?target_session_attrs=read-write&sslmode=require',
    )
    expect(withoutPassword(FORMATION)).toBe(
      'postgres://app@node1:6001,node2,[::1]:6003/payments?target_session_attrs=read-write&sslmode=require',
    )
  })
})
