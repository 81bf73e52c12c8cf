// A `date-time` as OpenAPI means it: RFC 3339 §5.6, any offset it allows (up to ±23:59), any year 0000–9999, any
// number of fractional digits. TypeBox's own check also admits RFC 9557 suffixes ("…Z[Europe/Paris]") that the
// document does not, so the validator reads the format with isDateTime (validator.ts). A time a client sends
// becomes an exact instant in JavaScript, never text PostgreSQL must parse: PostgreSQL refuses offsets beyond
// ±15:59 and the year 0, and rounds what it keeps to microseconds, which would move a window's edge.
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

type Six<T> = [T, T, T, T, T, T]

interface Instant {
  /** Whole microseconds since 1970-01-01T00:00Z, rounded down. */
  micros: bigint
  /** Whether digits beyond the microsecond were dropped (the instant lies strictly after `micros`). */
  beyond: boolean
}

/** The instant a date-time names, or undefined when it is not one RFC 3339 admits. */
export function instantOf(text: string): Instant | undefined {
  const parts = DATE_TIME.exec(text)
  if (!parts) return undefined
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as Six<number>
  const [fraction = '', sign, offsetHours = '0', offsetMinutes = '0'] = parts.slice(7)
  const leapYear = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
  const monthDays = month === 2 && leapYear ? 29 : DAYS_IN_MONTH[month - 1]
  if (!monthDays || day < 1 || day > monthDays) return undefined
  if (hour > 23 || minute > 59 || second > 60 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59)
    return undefined
  const offset = (sign === '-' ? -1 : 1) * (Number(offsetHours) * 60 + Number(offsetMinutes))
  // RFC 3339 §5.7: a leap second is 23:59:60 in UTC, whatever the offset it is written in.
  if (second === 60 && (((hour * 60 + minute - offset) % 1440) + 1440) % 1440 !== 1439) return undefined
  const date = new Date(0)
  date.setUTCFullYear(year, month - 1, day) // not Date.UTC, which reads the years 0–99 as 1900–1999
  date.setUTCHours(hour, minute - offset, second)
  const micros = BigInt(date.getTime()) * 1000n + BigInt(fraction.slice(0, 6).padEnd(6, '0'))
  return { micros, beyond: /[1-9]/.test(fraction.slice(6)) }
}

export const isDateTime = (text: string) => instantOf(text) !== undefined

// Every row's created_at lies within these years; an edge beyond them is an edge beyond every row.
const FIRST = -62_135_596_800_000_000n // 0001-01-01T00:00:00Z
const LAST = 253_402_300_799_999_999n // 9999-12-31T23:59:59.999999Z

/**
 * A window's edge for PostgreSQL (timestamptz text, UTC, microseconds): rounded down for `>` and `<=`, up for `>=`
 * and `<`, so that comparing a stored microsecond with it means what comparing with the exact instant means.
 */
export function windowEdge(text: string, round: 'down' | 'up'): string {
  const instant = instantOf(text)
  if (!instant) throw new Error(`not an RFC 3339 date-time: ${text}`)
  const micros = instant.micros + (round === 'up' && instant.beyond ? 1n : 0n)
  if (micros < FIRST) return '-infinity'
  if (micros > LAST) return 'infinity'
  const millis = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n)
  const iso = new Date(Number(millis)).toISOString()
  return `${iso.slice(0, -1)}${String(micros - millis * 1000n).padStart(3, '0')}Z`
}
