// The client from the seed's lesson, to show what goes wrong: it retries a failed POST, but makes the
// Idempotency-Key inside the retry loop, so each attempt is a new operation to the server. Do not copy it.
export async function naiveCreateCharge(
  baseUrl: string,
  apiKey: string,
  body: object,
  maxAttempts = 3,
): Promise<{ id: string; attempts: number }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await fetch(`${baseUrl}/v1/charges`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        }, // the mistake
        body: JSON.stringify(body),
      })
      return { id: ((await response.json()) as { id: string }).id, attempts: attempt }
    } catch (error) {
      if (attempt >= maxAttempts) throw error
    }
  }
}
