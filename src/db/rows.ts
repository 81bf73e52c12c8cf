// The one row of a statement that always answers with one (an aggregate, an insert or an update by key with
// `returning`): a statement that answered none is a defect, thrown with what it should have answered, rather than
// a TypeError further on.
export function theRow<T>(rows: readonly T[], what: string): T {
  const [row] = rows
  if (row === undefined) throw new Error(`expected ${what}, and the statement answered no row`)
  return row
}
