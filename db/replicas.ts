// Read replicas with read-your-writes (DATABASE_REPLICA_URLS; docs/design.md "Read replicas and
// read-your-writes"). The reads that tolerate a short lag go to a streaming replica that is up,
// within DATABASE_REPLICA_MAX_LAG_MS of the primary, and past the caller's own latest write;
// everything else, and every read no replica can take, goes to the primary.
//
// The caller's latest write is a mark on the primary (read_marks: its WAL insert position after
// the write committed), so it holds across instances behind a load balancer: a write on one
// instance, the next read on another, which looks the mark up before choosing. A poller knows
// each replica's replay position (a stale one is only conservative: it is never ahead).
import type postgres from 'postgres'
import { sql } from './orm.ts'
import { openPostgresPool, preparedRows, type Database, type Db } from './client.ts'
import { createRepositories, type Repositories } from './repositories/index.ts'
import { SettingsCache } from './settings-cache.ts'
import { isConnectionLost } from './unavailable.ts'
import type { Sealer } from './secret-box.ts'

/** How often the replicas' replay positions and the primary's WAL position are read. */
export const POLL_INTERVAL_MS = 200
/** A probe that has not answered by then counts the server as down until it answers. */
export const PROBE_TIMEOUT_MS = 1000

/** A WAL position (`16/B374D848`) as a number that compares: high 32 bits, low 32 bits. */
export function parseLsn(text: string): bigint {
  const [high, low] = text.split('/')
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`)
}

/** Where one read goes: the repositories of a replica, or the primary's (`replica` null). */
export interface ReadChoice {
  repos: Repositories
  /** The replica's name (`replica-1`, in the order of DATABASE_REPLICA_URLS), or null for the primary. */
  replica: string | null
}

/** What the poller last learned of a replica (tests and logs read it). */
export interface ReplicaState {
  name: string
  /** May serve reads: answered in time, in recovery, within the maximum lag. */
  usable: boolean
  /** Why it may not, when it may not. */
  reason: string | null
  /** Its last polled replay position. */
  replayLsn: bigint | null
}

interface Replica extends ReplicaState {
  repos: Repositories
  end(): Promise<void>
  probe: postgres.Sql
  probing: boolean
}

/**
 * A read on a replica that is worth one try on the primary: its connection was lost (the server is
 * gone or restarting: db/unavailable.ts), or the standby cancelled it for a conflict with recovery
 * (40001 there) — not a mistake of the query.
 */
export function replicaReadFailed(err: unknown): boolean {
  if (isConnectionLost(err)) return true
  for (let e = err as { code?: unknown; cause?: unknown } | undefined, depth = 0; e && depth < 8; e = e.cause as typeof e, depth++) {
    if (e.code === '40001') return true
  }
  return false
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** A connection of its own for the poller (outside the pools, so a busy pool never delays it). */
function probeClient(connect: typeof postgres, url: string): postgres.Sql {
  return connect(url, { max: 1, onnotice: () => {}, connect_timeout: PROBE_TIMEOUT_MS / 1000, idle_timeout: 0, max_lifetime: 0, fetch_types: false, connection: { application_name: 'growthdesk-replica-probe' } })
}

export interface ReadRouterOptions {
  /** The primary's URL (DATABASE_URL): the poller reads its WAL position on a connection of its own. */
  primaryUrl: string
  urls: string[]
  maxLagMs: number
  /** Seals and opens secrets, as the primary's repositories do. */
  box: Sealer
  pollIntervalMs?: number
  /** Told of every statement a replica's repositories send (as DatabaseConfig.onQuery is for the primary's). */
  onReplicaQuery?: (sql: string, replica: string) => void
}

const markOf = (db: Db) =>
  preparedRows(db, { toSQL: () => ({ sql: 'select lsn::text from read_marks where reader = $1', params: [sql.placeholder('reader')] }) }, 'read_mark', ([lsn]) => lsn as string)
// pg_current_wal_insert_lsn(), read after the write committed, is at or past the write's commit
// record; greatest() keeps the later of two instances' marks whatever order they land in.
const setMark = (db: Db) =>
  preparedRows(db, {
    toSQL: () => ({
      sql: 'insert into read_marks (reader, lsn) values ($1, pg_current_wal_insert_lsn()) on conflict (reader) do update set lsn = greatest(read_marks.lsn, excluded.lsn), at = now()',
      params: [sql.placeholder('reader')],
    }),
  }, 'read_mark_set', () => null)

export class ReadRouter {
  readonly replicas: Replica[]
  readonly maxLagMs: number
  readonly #primary: ReadChoice
  readonly #primaryProbe: postgres.Sql
  readonly #lookup: ReturnType<typeof markOf>
  readonly #mark: ReturnType<typeof setMark>
  /** The primary's WAL position as sampled, oldest first: a replica behind the newest sample older than maxLagMs is too far behind. */
  #samples: { at: number; lsn: bigint }[] = []
  #timer: NodeJS.Timeout | undefined
  #primaryProbing = false
  #polling: Promise<void> | undefined
  #next = 0
  #closed = false

  private constructor(primaryDb: Db, primaryRepos: Repositories, replicas: Replica[], primaryProbe: postgres.Sql, maxLagMs: number) {
    this.#primary = { repos: primaryRepos, replica: null }
    this.replicas = replicas
    this.#primaryProbe = primaryProbe
    this.maxLagMs = maxLagMs
    this.#lookup = markOf(primaryDb)
    this.#mark = setMark(primaryDb)
  }

  /** Opens a pool per replica and starts polling (a replica that is down now is skipped until it answers). */
  static async open(primary: Database, primaryRepos: Repositories, options: ReadRouterOptions): Promise<ReadRouter> {
    // Loaded here, as db/client.ts does: an embedded deployment never loads the driver.
    const { default: connect } = await import('postgres')
    const replicas: Replica[] = []
    for (const [i, url] of options.urls.entries()) {
      const name = `replica-${i + 1}`
      const onQuery = options.onReplicaQuery
      const { client, db } = await openPostgresPool(url, 'growthdesk-replica', onQuery && ((text) => onQuery(text, name)))
      // Nothing of a replica is cached: a credential or role read there could be older than
      // what the primary's cache was told of, and would stay after the change.
      const repos = createRepositories(db, new SettingsCache({ ttlMs: 0 }), options.box)
      replicas.push({ name, usable: false, reason: 'not polled yet', replayLsn: null, repos, end: () => client.end({ timeout: 5 }), probe: probeClient(connect, url), probing: false })
    }
    const router = new ReadRouter(primary.db, primaryRepos, replicas, probeClient(connect, options.primaryUrl), options.maxLagMs)
    await router.poll()
    const interval = options.pollIntervalMs ?? POLL_INTERVAL_MS
    const tick = () => {
      if (router.#closed) return
      // A round never rejects (each probe records its own failure).
      router.#timer = setTimeout(() => {
        router.poll().finally(tick).catch(() => {})
      }, interval).unref()
    }
    tick()
    return router
  }

  /** What is known of each replica now. */
  states(): ReplicaState[] {
    return this.replicas.map(({ name, usable, reason, replayLsn }) => ({ name, usable, reason, replayLsn }))
  }

  /** One round of polling now (the timer runs them every POLL_INTERVAL_MS; overlapping calls share a round). */
  poll(): Promise<void> {
    return (this.#polling ??= this.#pollOnce().finally(() => {
      this.#polling = undefined
    }))
  }

  async #pollOnce(): Promise<void> {
    const now = performance.now()
    if (!this.#primaryProbing) {
      this.#primaryProbing = true
      const query = this.#primaryProbe`select pg_current_wal_lsn()::text as lsn`.then((rows) => rows)
      query.catch(() => {}).finally(() => {
        this.#primaryProbing = false
      })
      try {
        const [row] = await withTimeout(query, PROBE_TIMEOUT_MS)
        this.#samples.push({ at: now, lsn: parseLsn(row!.lsn as string) })
      } catch {
        // The primary did not answer: the samples there are still bound the lag check.
      }
    }
    // Only the newest sample older than maxLagMs is ever compared with: the older ones go.
    const cutoff = now - this.maxLagMs
    while (this.#samples.length > 1 && this.#samples[1]!.at <= cutoff) this.#samples.shift()
    const bound = this.#samples[0] && this.#samples[0].at <= cutoff ? this.#samples[0].lsn : null
    await Promise.all(this.replicas.map((r) => this.#probe(r, bound)))
  }

  async #probe(replica: Replica, bound: bigint | null): Promise<void> {
    // A probe still waiting (a server that hangs) is not doubled — it would queue behind the
    // first on the probe's one connection — until it settles: it is counted as down meanwhile.
    if (replica.probing) return
    replica.probing = true
    const query = replica.probe`select pg_is_in_recovery() as recovering, pg_last_wal_replay_lsn()::text as lsn`.then((rows) => rows)
    query.catch(() => {}).finally(() => {
      replica.probing = false
    })
    try {
      const [row] = await withTimeout(query, PROBE_TIMEOUT_MS)
      const lsn = row!.lsn === null ? null : parseLsn(row!.lsn as string)
      replica.replayLsn = lsn
      const reason = !row!.recovering
        ? 'not in recovery (promoted, or not a replica): it may have diverged from the primary'
        : lsn === null
          ? 'has replayed nothing yet'
          : bound !== null && lsn < bound
            ? `more than ${this.maxLagMs} ms behind the primary`
            : null
      replica.usable = reason === null
      replica.reason = reason
    } catch (err) {
      replica.usable = false
      replica.reason = `unreachable: ${(err as Error).message}`
    }
  }

  /**
   * Where a read of `reader` (`key:<keyId>`, `user:<userId>`) goes: a usable replica that has
   * replayed past the reader's mark (round robin among them), else the primary. No usable
   * replica: the primary, without looking the mark up.
   */
  async choose(reader: string): Promise<ReadChoice> {
    const usable = this.replicas.filter((r) => r.usable)
    if (usable.length === 0) return this.#primary
    const [mark] = await this.#lookup.execute({ reader })
    const floor = mark === undefined ? null : parseLsn(mark)
    const fit = floor === null ? usable : usable.filter((r) => r.replayLsn !== null && r.replayLsn >= floor)
    if (fit.length === 0) return this.#primary
    const replica = fit[this.#next++ % fit.length]!
    return { repos: replica.repos, replica: replica.name }
  }

  /** Records that `reader` has just written (its write committed): its reads wait for replicas to pass this point. */
  async marked(reader: string): Promise<void> {
    await this.#mark.execute({ reader })
  }

  /** The primary's repositories, for a read that a replica failed. */
  get primary(): ReadChoice {
    return this.#primary
  }

  async close(): Promise<void> {
    this.#closed = true
    clearTimeout(this.#timer)
    await this.#polling?.catch(() => {})
    await Promise.all([
      this.#primaryProbe.end({ timeout: 1 }).catch(() => {}),
      ...this.replicas.flatMap((r) => [r.end().catch(() => {}), r.probe.end({ timeout: 1 }).catch(() => {})]),
    ])
  }
}
