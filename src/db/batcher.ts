// Group commit for a statement that many concurrent requests send: while one batch is in flight, the requests
// that arrive queue, and go out together, as one statement and one commit, the moment it returns. Nothing waits
// for company: a request that finds no batch in flight goes out at the end of this turn of the event loop
// (setImmediate, no timer), with the requests whose data arrived in the same turn, so a lone client pays nothing.
// PostgreSQL charges per statement and per commit (a round trip, bind, executor start, a WAL flush) more than
// per row, so under load the claim of twenty requests costs little more than the claim of one.
import { isConcurrentUpdate, isDatabaseUnavailable } from './errors.js'

interface Waiting<In, Out> {
  item: In
  resolve: (value: Out) => void
  reject: (error: unknown) => void
}

export interface BatcherOptions {
  /** The most items one statement carries; the rest wait for the next one. */
  maxSize: number
  /** Told the size of each batch as it goes out (a metric: how much the requests share). */
  onBatch?: (size: number) => void
  /**
   * How long one statement may hold the queue. A statement that has not answered by then (its connection went
   * silent: a database host gone without a reset, a pooler waiting for a server) no longer holds back the
   * requests behind it; they go out in the next statement, on another connection. Its own requests wait on.
   */
  stallAfterMs?: number
  /** Told when a statement stalled, with its size: an operator should hear of a silent connection. */
  onStall?: (size: number) => void
  /**
   * Told when a batch failed and is sent again one item at a time, with its size and error. Rare where one request's
   * data or a takeover is the cause; a statement that fails for every batch (a defect: it can never carry more than
   * one request, and every request costs two) shows here, where nothing else would.
   */
  onSplit?: (size: number, error: unknown) => void
}

/** What the owner of a batched statement tells its batcher, besides the size of a batch. */
export type SharedStatements = Omit<BatcherOptions, 'maxSize'>

/**
 * Sends items through `run`, which makes one statement of many items and answers each, in their order. A batch
 * that fails because of what one item holds (a value a column refuses, a constraint), or loses a deadlock, rolled
 * back whole: it is sent again one item at a time, so that only a failing item fails. A batch that fails because
 * the database is unreachable may or may not have committed: it fails for all of its items, as a single
 * statement would, and each request answers 503.
 */
export class Batcher<In, Out> {
  readonly #run: (items: In[]) => Promise<Out[]>
  readonly #options: BatcherOptions
  #queue: Waiting<In, Out>[] = []
  // A batch is scheduled (for the end of this turn) or in flight: what arrives now queues for the next one.
  #busy = false

  constructor(run: (items: In[]) => Promise<Out[]>, options: BatcherOptions) {
    this.#run = run
    this.#options = options
  }

  submit(item: In): Promise<Out> {
    return new Promise<Out>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      if (this.#busy) return
      // Not at once: under load, requests come back in waves (the answers of one batch bring their clients back
      // together), and the first of a wave sent alone made the rest wait for its statement (measured: half the
      // claim statements carried one request). Their data arrives in one turn of the event loop.
      this.#busy = true
      setImmediate(() => this.#sendNext())
    })
  }

  #sendNext(): void {
    const batch = this.#queue.splice(0, this.#options.maxSize)
    this.#busy = batch.length > 0
    if (batch.length === 0) return
    this.#options.onBatch?.(batch.length)
    void this.#send(batch)
  }

  async #send(batch: Waiting<In, Out>[]): Promise<void> {
    // The queue is released once: when this statement answers, or when it stalls, whichever comes first.
    let released = false
    const release = () => {
      if (released) return
      released = true
      this.#sendNext()
    }
    const { stallAfterMs, onStall } = this.#options
    const stall =
      stallAfterMs === undefined
        ? undefined
        : setTimeout(() => {
            onStall?.(batch.length)
            release()
          }, stallAfterMs).unref()
    const sent = await this.#run(batch.map((waiting) => waiting.item)).then(
      (results) => ({ results }),
      (error: unknown) => ({ error }),
    )
    clearTimeout(stall)
    // The next batch goes out before this one's requests resume: the database need not wait for them.
    release()
    if ('results' in sent) {
      for (const [index, waiting] of batch.entries()) waiting.resolve(sent.results[index] as Out)
    } else if (batch.length === 1 || (isDatabaseUnavailable(sent.error) && !isConcurrentUpdate(sent.error))) {
      for (const waiting of batch) waiting.reject(sent.error)
    } else {
      // Nothing of it was committed: alone, each item that can go through does.
      this.#options.onSplit?.(batch.length, sent.error)
      for (const waiting of batch)
        this.#run([waiting.item]).then(([result]) => waiting.resolve(result as Out), waiting.reject)
    }
  }
}
