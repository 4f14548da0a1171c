// What every call looks up before its work — the credential, the caller's role in the project,
// the workspace's disabled tools — kept in memory, so that a read is one statement. Only
// credentials, roles and settings are kept here, never data a tool returns.
//
// Every change to what is kept drops all of it, on every instance: a trigger on each table it
// comes from (migration 0008) notifies the channel `growthdesk_settings` at commit, and each
// instance listens (db/client.ts `listen`). A writer in this process also drops it itself as
// soon as its write has committed (`changed()`), before it answers, so its own next request
// never waits for the notification. While the listening connection is down, nothing is kept
// (a notification missed then would leave an entry stale); entries also expire after `ttlMs`
// whatever happens, and each map holds at most `maxEntries`.
//
// A lookup that raced a change is not kept: every change advances a generation, and a value is
// stored only if no change came between the start of its lookup and its end.

export const SETTINGS_CHANNEL = 'growthdesk_settings'

export interface SettingsCacheOptions {
  /** How long an entry may be used at most (default 10 s); 0 turns the cache off. */
  ttlMs?: number
  /** Entries per map (default 10,000); the oldest go first. */
  maxEntries?: number
  /** The clock (tests advance it); monotonic milliseconds. */
  clock?: () => number
}

interface Entry<V> {
  value: V
  expires: number
}

/** One map of lookups, its entries valid until the next change. */
export class CachedLookup<V> {
  readonly #entries = new Map<string, Entry<V>>()
  readonly #cache: SettingsCache

  constructor(cache: SettingsCache) {
    this.#cache = cache
  }

  /** The cached value of `key`, or `load()`'s (kept when it is not undefined and nothing changed meanwhile). */
  async get(key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cache = this.#cache
    const now = cache.clock()
    const hit = this.#entries.get(key)
    if (hit !== undefined) {
      if (hit.expires > now && cache.active) return hit.value
      this.#entries.delete(key)
    }
    const generation = cache.generation
    const value = await load()
    if (value !== undefined && cache.active && cache.generation === generation) {
      if (this.#entries.size >= cache.maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
      this.#entries.set(key, { value, expires: now + cache.ttlMs })
    }
    return value
  }

  clear(): void {
    this.#entries.clear()
  }

  get size(): number {
    return this.#entries.size
  }
}

export class SettingsCache {
  readonly ttlMs: number
  readonly maxEntries: number
  readonly clock: () => number
  /** Advanced by every change: a lookup started before it is not kept. */
  generation = 0
  #listening = false
  readonly #lookups: CachedLookup<unknown>[] = []

  constructor(options: SettingsCacheOptions = {}) {
    this.ttlMs = options.ttlMs ?? 10_000
    this.maxEntries = options.maxEntries ?? 10_000
    this.clock = options.clock ?? (() => performance.now())
  }

  /** A map of lookups that every change clears. */
  lookup<V>(): CachedLookup<V> {
    const lookup = new CachedLookup<V>(this)
    this.#lookups.push(lookup as CachedLookup<unknown>)
    return lookup
  }

  /** Whether entries are kept and used: while the instance hears every change, and the TTL is not 0. */
  get active(): boolean {
    return this.#listening && this.ttlMs > 0
  }

  /** Something cached changed (a notification, or a write of this process that committed): drop it all. */
  changed(): void {
    this.generation++
    for (const lookup of this.#lookups) lookup.clear()
  }

  /** Runs a write that may change something cached, and drops it all once the write is over
   * (committed or not): this process's next request reads afresh, without waiting for the notification. */
  async changes<T>(write: PromiseLike<T>): Promise<T> {
    try {
      return await write
    } finally {
      this.changed()
    }
  }

  /** The listening connection is up (again) or down: either way, what was kept may have missed a change. */
  setListening(listening: boolean): void {
    this.#listening = listening
    this.changed()
  }
}
