// Fair-use counters: hits per key in fixed windows, shared by every instance on one database.
//
// Each instance keeps the live view in memory, so deciding a request costs no database round
// trip. What it counted goes to the database in one statement per sync interval (100 ms by
// default), and the statement returns every counter's total across instances. The first hit on
// a key in a window waits for that statement, so an instance that has not seen a key yet learns
// what the others counted before it answers: a limit holds across instances to within what the
// others count in one sync interval. Windows are fixed (aligned to the epoch), so all instances
// agree on where a window starts and a key's count resets for everyone at once.
//
// Without a backend (the embedded database, which one process owns) the counters are local.
import type { WindowHits } from '../db/repositories/rate-limits.ts'

export interface CounterBackend {
  add(rows: WindowHits[]): Promise<WindowHits[]>
  purgeBefore(windowStart: number): Promise<number>
}

export interface WindowCount {
  /** Hits in the current window, this one included. */
  current: number
  /** Milliseconds until the window ends. */
  ttl: number
}

interface Entry {
  windowStart: number
  windowMs: number
  /** The total across instances, as of the last sync (it includes what this instance sent). */
  shared: number
  /** Counted here, not sent yet. */
  pending: number
  /** Counted here, in the statement now in flight. */
  sending: number
  /** The first sync of a key new in this window; its hits wait for it. */
  ready: Promise<void> | undefined
}

export interface CounterOptions {
  /** How often counted hits go to the database (ms). */
  syncMs?: number
  /** Keys kept in memory at most; the oldest are dropped first. */
  maxKeys?: number
  /** Counters of windows that ended longer ago than this are deleted from the database (ms). */
  retainMs?: number
  /** The longest window any instance counts in (ms): the database keeps rows younger than this
   * plus `retainMs`, so that a sweep never deletes a window still under way, even one this
   * instance has not counted in yet. Windows seen longer than it extend it. */
  longestWindowMs?: number
  onError?: (err: unknown) => void
  /** The clock windows are counted on, in epoch milliseconds (the app's clock: BuildOptions.now). Default Date.now. */
  now?: () => number
}

const CHUNK = 1000

export class SharedCounters {
  readonly #backend: CounterBackend | undefined
  readonly #entries = new Map<string, Entry>()
  readonly #syncMs: number
  readonly #maxKeys: number
  readonly #retainMs: number
  #longestWindowMs: number
  readonly #onError: (err: unknown) => void
  readonly #now: () => number
  #inFlight: Promise<void> | undefined
  #queued: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #lastSweep = 0

  constructor(backend: CounterBackend | undefined, options: CounterOptions = {}) {
    this.#backend = backend
    this.#syncMs = options.syncMs ?? 100
    this.#maxKeys = options.maxKeys ?? 100_000
    this.#retainMs = options.retainMs ?? 60 * 60_000
    this.#longestWindowMs = options.longestWindowMs ?? 0
    this.#onError = options.onError ?? (() => {})
    this.#now = options.now ?? Date.now
  }

  /** Whether the counts are shared with other instances (a database backend). */
  get shared(): boolean {
    return this.#backend !== undefined
  }

  /** Starts the periodic sync and sweep (unref'd: it never keeps the process alive). */
  start(): void {
    if (this.#timer) return
    this.#timer = setInterval(() => this.#tick(), this.#syncMs)
    this.#timer.unref()
  }

  /** Stops the timer and sends what is still pending. */
  async close(): Promise<void> {
    clearInterval(this.#timer)
    this.#timer = undefined
    await this.flush()
  }

  /** Counts a hit on `key` in its current window of `windowMs`. */
  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const now = this.#now()
    const windowStart = now - (now % windowMs)
    let entry = this.#entries.get(key)
    if (!entry || entry.windowStart !== windowStart || entry.windowMs !== windowMs) {
      entry = { windowStart, windowMs, shared: 0, pending: 0, sending: 0, ready: undefined }
      if (windowMs > this.#longestWindowMs) this.#longestWindowMs = windowMs
      // Re-inserted, so the map's order is the order of last new windows (oldest dropped first).
      this.#entries.delete(key)
      this.#entries.set(key, entry)
      if (this.#entries.size > this.#maxKeys) this.#evict()
      entry.pending++
      if (this.#backend) {
        // Counted first: the statement this starts (or the next one) carries this hit.
        const e = entry
        const ready: Promise<void> = this.flush().then(() => {
          if (e.ready === ready) e.ready = undefined
        })
        e.ready = ready
      }
    } else {
      entry.pending++
    }
    if (entry.ready) await entry.ready
    return { current: entry.shared + entry.sending + entry.pending, ttl: entry.windowStart + windowMs - this.#now() }
  }

  /** The count of `key` in its current window, without counting a hit (0 when unknown here). */
  peek(key: string, windowMs: number): WindowCount {
    const now = this.#now()
    const entry = this.#entries.get(key)
    if (!entry || entry.windowMs !== windowMs || entry.windowStart + windowMs <= now) return { current: 0, ttl: 0 }
    return { current: entry.shared + entry.sending + entry.pending, ttl: entry.windowStart + windowMs - now }
  }

  /** Sends the pending hits now (one statement at a time; a call during one waits for the next). */
  flush(): Promise<void> {
    if (!this.#backend) return Promise.resolve()
    if (!this.#inFlight) {
      this.#inFlight = this.#send().finally(() => {
        this.#inFlight = undefined
      })
      return this.#inFlight
    }
    this.#queued ??= this.#inFlight.then(() => {
      this.#queued = undefined
      return this.flush()
    })
    return this.#queued
  }

  async #send(): Promise<void> {
    const batch: { key: string; entry: Entry; hits: number }[] = []
    for (const [key, entry] of this.#entries) {
      if (entry.pending === 0) continue
      batch.push({ key, entry, hits: entry.pending })
      entry.sending += entry.pending
      entry.pending = 0
    }
    for (let i = 0; i < batch.length; i += CHUNK) {
      const chunk = batch.slice(i, i + CHUNK)
      try {
        const totals = await this.#backend!.add(chunk.map((b) => ({ key: b.key, windowStart: b.entry.windowStart, hits: b.hits })))
        const byKey = new Map(totals.map((r) => [`${r.windowStart}:${r.key}`, r.hits]))
        for (const b of chunk) {
          b.entry.sending -= b.hits
          const total = byKey.get(`${b.entry.windowStart}:${b.key}`)
          if (total !== undefined) b.entry.shared = Math.max(b.entry.shared, total)
        }
      } catch (err) {
        // The database is unreachable: keep counting here and try again at the next sync.
        for (const b of chunk) {
          b.entry.sending -= b.hits
          b.entry.pending += b.hits
        }
        this.#onError(err)
      }
    }
  }

  #tick(): void {
    const now = this.#now()
    if (this.#backend) {
      for (const entry of this.#entries.values()) {
        if (entry.pending > 0) {
          this.flush().catch(this.#onError)
          break
        }
      }
    }
    if (now - this.#lastSweep < 60_000) return
    this.#lastSweep = now
    for (const [key, entry] of this.#entries) {
      if (entry.windowStart + entry.windowMs <= now && entry.pending === 0 && entry.sending === 0) this.#entries.delete(key)
    }
    // By start: a window that started before this has ended more than `retainMs` ago.
    this.#backend?.purgeBefore(now - this.#retainMs - this.#longestWindowMs).catch(this.#onError)
  }

  #evict(): void {
    for (const key of this.#entries.keys()) {
      if (this.#entries.size <= this.#maxKeys) break
      this.#entries.delete(key)
    }
  }
}

/**
 * The counters as a store of @fastify/rate-limit (its `store` option takes a class): the
 * per-route limits (console sign-in, OAuth endpoints) count in the same shared windows. Each
 * route's limit is a child with a prefix of its own, as the plugin's local store keeps a map per route.
 */
export function rateLimitStore(counters: SharedCounters) {
  type Callback = (err: Error | null, result?: WindowCount) => void
  return class SharedRateLimitStore {
    prefix = ''
    incr(key: string, cb: Callback, timeWindow: number): void {
      counters.hit(this.prefix + key, timeWindow).then((r) => cb(null, r), (err: Error) => cb(err))
    }

    read(key: string, cb: Callback, timeWindow: number): void {
      cb(null, counters.peek(this.prefix + key, timeWindow))
    }

    /** `params` are the route's merged limit settings; `routeInfo` is the route (empty for createRateLimit). */
    child(params: object): SharedRateLimitStore {
      const store = new SharedRateLimitStore()
      const route = (params as { routeInfo?: { method?: string | string[]; url?: string } }).routeInfo
      store.prefix = route?.url ? `${[route.method].flat().join(',')} ${route.url} ` : this.prefix
      return store
    }
  }
}
