// Where the scripts find the API: PAYMENTS_URL, else this machine at the PORT the server was started with, as the
// README's "Use it" reads it.
export function localApiUrl(): string {
  return process.env.PAYMENTS_URL ?? `http://127.0.0.1:${process.env.PORT || 3000}`
}
