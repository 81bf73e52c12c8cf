// PostgreSQL array literals, written here rather than by postgres.js's sql.array(): postgres.js serialises an
// array only once it has fetched the server's array types, which it does after a pool's first query, so an
// array sent by the first query of a new pool arrived as "1,2" and failed ("malformed array literal"). Sent as
// text and cast in SQL (`${arrayLiteral(values)}::int[]`), it needs no type information from the driver.

/** `{"a","b",NULL}`: each element quoted and escaped, null as NULL. */
export function arrayLiteral(values: readonly (string | number | null)[]): string {
  const element = (value: string | number | null) =>
    value === null ? 'NULL' : `"${String(value).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
  return `{${values.map(element).join(',')}}`
}
