// Readiness, judged while the faults run: every second each API instance is asked /readyz and, beside it, a
// request it must be able to serve (the newest charge). An instance that says it is ready while it cannot serve
// for longer than a failover's own blip (`toleranceMs`) breaks the promise that readiness says so; an instance
// that says nothing (stopped, dead) is not ready, as a load balancer's probe would conclude.
import type { Stack } from './stack.js'

export interface ReadinessWatch {
  probes: number
  /** Windows in which an instance said ready and could not serve, longer than the tolerance. */
  violations: string[]
  stop(): void
}

export function watchReadiness(stacks: { stack: Stack; apiKey: string }[], toleranceMs: number): ReadinessWatch {
  const watch: ReadinessWatch = { probes: 0, violations: [], stop: () => {} }
  const readyButNotServing = new Map<string, { since: number; answer: string; reported: boolean }>()
  let stopped = false
  const probe = async (stack: Stack, apiKey: string) => {
    for (const member of stack.members.filter((candidate) => candidate.role === 'api')) {
      const url = member.process?.url
      if (!url || member.stopped) {
        readyButNotServing.delete(member.name)
        continue
      }
      const [ready, serving] = await Promise.all([
        statusOf(`${url}/readyz`),
        statusOf(`${url}/v1/charges?limit=1`, { authorization: `Bearer ${apiKey}` }),
      ])
      watch.probes++
      if (ready !== 200 || serving === 200 || member.stopped || member.process?.url !== url) {
        readyButNotServing.delete(member.name)
        continue
      }
      const window = readyButNotServing.get(member.name) ?? {
        since: Date.now(),
        answer: String(serving),
        reported: false,
      }
      readyButNotServing.set(member.name, window)
      if (!window.reported && Date.now() - window.since > toleranceMs) {
        window.reported = true
        watch.violations.push(
          `${stack.name} ${member.name}: /readyz said 200 for ${((Date.now() - window.since) / 1000).toFixed(1)} s ` +
            `while a GET was answered ${window.answer}`,
        )
      }
    }
  }
  const loop = async () => {
    while (!stopped) {
      await Promise.all(stacks.map(({ stack, apiKey }) => probe(stack, apiKey)))
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }
  const running = loop()
  watch.stop = () => {
    stopped = true
    void running
  }
  return watch
}

async function statusOf(url: string, headers: Record<string, string> = {}): Promise<number | 'none'> {
  try {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(2000) })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 'none'
  }
}
