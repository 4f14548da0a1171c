// Opens the configured database: PostgreSQL through postgres.js, or embedded PGlite
// (a folder, or memory). Both are driven through the same drizzle schema and queries.
import fs from 'node:fs'
import path from 'node:path'
import { pgliteDriver, postgresDriver, sql, type PgDatabase, type PgQueryResultHKT } from './orm.ts'
import { schema } from './schema.ts'
import { copyTemplate, ensureTemplate, migrationsFolder } from './pglite-template.ts'
import { WriteHealth } from './unavailable.ts'
import { installPostgresGuard } from './postgres-guard.ts'

/** Which database to open (config.ts builds it from the environment). */
export type DatabaseConfig = (
  | { kind: 'postgres'; url: string }
  | {
    kind: 'pglite'
    dataDir: string | undefined // undefined = in memory
    /** Sync every commit to disk before it is acknowledged (default true; see openPglite). */
    sync?: boolean
  }
) & {
  /**
   * Called with the text of every statement the app sends through drizzle (queries and
   * `execute`; not a transaction's BEGIN/COMMIT, nor the migrations), so that benchmarks and
   * tests can count statements per call. Never set by the configuration from the environment.
   */
  onQuery?: (sql: string) => void
}

export type Db = PgDatabase<PgQueryResultHKT, typeof schema>
/** A transaction handle offers the same query API as the database. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0]
export type Queryable = Db | Tx

/** Rows of `db.execute`: postgres.js returns an array, PGlite `{ rows }`. */
export function rowsOf<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[]
}

/**
 * A prepared statement for a hot read whose rows need no decoding: the driver hands each row over
 * as an array of its values, and `row` makes the result of it. drizzle's own result mapping
 * looks at every field of every row (an `is` walk up the prototype chain, then a decoder): for a
 * page of 20 opportunities that was ~45 µs of a listing call's server CPU. `query` is a built
 * select whose columns are in the order `row` reads them.
 */
export function preparedRows<R>(db: Queryable, query: { toSQL(): { sql: string; params: unknown[] } }, name: string, row: (values: unknown[]) => R) {
  return db._.session.prepareQuery<{ execute: R[]; all: R[]; values: unknown[][] }>(query.toSQL(), undefined, name, true, (rows) => rows.map(row))
}

/**
 * A timestamptz as PostgreSQL writes it on the app's connections (DateStyle ISO and TimeZone UTC:
 * pinned on every PostgreSQL connection and the PGlite session), "2026-11-24 03:52:38.123456+00" (the
 * fraction without its trailing zeros, or none), as toISOString() writes the same time:
 * "2026-11-24T03:52:38.123Z" (truncated to the millisecond, as a Date is). Also takes the same
 * text without the "+00" (a `timestamp`). Reading the column as it is costs PostgreSQL less than
 * `(t at time zone 'UTC')::text` (14 % of a listing statement's CPU, docs/benchmarks.md), and
 * that less than `to_char`.
 */
export function isoMillis(t: string): string {
  const u = utcTimeText(t)
  return `${u.slice(0, 10)}T${u.length === 19 ? `${u.slice(11)}.000` : `${u.slice(11)}00`.slice(0, 12)}Z`
}

/**
 * `t` without its "+00", checked to be a time in UTC as PostgreSQL writes it (the seconds, then
 * at most a fraction): a time written in another zone ("…+02", a session whose TimeZone was not
 * pinned) throws instead of being read hours off.
 */
export function utcTimeText(t: string): string {
  const u = t.endsWith('+00') ? t.slice(0, -3) : t
  if (u.length > 19 && (u.charCodeAt(19) !== 46 || u.includes('+', 20) || u.includes('-', 20))) throw new Error(`not a UTC time as PostgreSQL writes it: ${t}`)
  return u
}

/** A unique-constraint violation, however the driver (or drizzle's wrapper) reports it. */
export function isUniqueViolation(err: unknown): boolean {
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.code === '23505') return true
  }
  return false
}

/** What a listener hears: each notification's payload, and when it starts or stops hearing them. */
export interface ListenHandlers {
  notify(payload: string): void
  /** Listening (again): from now on no notification is missed. */
  up(): void
  /** The connection that listens is gone: notifications may be missed until the next `up`. */
  down(): void
}

export interface Database {
  db: Db
  kind: 'postgres' | 'pglite'
  migrate(): Promise<void>
  ping(): Promise<void>
  /** LISTENs on `channel` until the returned function is called (it never throws; a lost connection is retried). */
  listen(channel: string, handlers: ListenHandlers): Promise<() => Promise<void>>
  close(): Promise<void>
  /** Embedded only: why the database cannot write now (a full disk), or undefined (db/unavailable.ts). */
  writeProblem?(): string | undefined
}

/** How long a PostgreSQL listener waits before connecting again after losing its connection. */
const LISTEN_RETRY_MS = 1000

/** fsync(2) calls the embedded database has made (tests check that commits sync). */
export const embeddedSyncs = { count: 0 }

/**
 * PGlite's file system on a Node folder, with fsync that reaches the disk. Emscripten's NODEFS
 * has no fsync of its own, so PostgreSQL's WAL flush at commit is a no-op there: an
 * acknowledged write would survive a crash of the process but not of the OS or the power.
 */
function syncedNodeFS(NodeFS: ReturnType<typeof pgliteDriver>['NodeFS'], dataDir: string) {
  type InitResult = Awaited<ReturnType<InstanceType<typeof NodeFS>['init']>>
  type Stream = { nfd: number }
  return new (class SyncedNodeFS extends NodeFS {
    override async init(...args: Parameters<InstanceType<typeof NodeFS>['init']>): Promise<InitResult> {
      const result = await super.init(...args)
      const preRun = result.emscriptenOpts.preRun ?? []
      result.emscriptenOpts.preRun = [
        ...(Array.isArray(preRun) ? preRun : [preRun]),
        (module: { NODEFS: { stream_ops: { fsync?: (stream: Stream) => number } } }) => {
          module.NODEFS.stream_ops.fsync = (stream) => {
            fs.fsyncSync(stream.nfd)
            embeddedSyncs.count++
            return 0
          }
        },
      ]
      return result
    }
  })(dataDir)
}

export class DatabaseInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The embedded database in ${dataDir} is in use by another growthdesk process (pid ${pid}). ` +
        'Stop that process first, or set DATABASE_URL to a PostgreSQL server, which many processes can share.'
    )
    this.name = 'DatabaseInUseError'
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/** Folders this process holds: the pid file alone cannot tell two opens in one process apart. */
const heldHere = new Set<string>()

const LOCK_FILE = 'growthdesk.pid'

/** PGlite has no locking of its own: two processes (or two opens) on one folder would corrupt it. */
function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true })
  const lockFile = path.join(dataDir, LOCK_FILE)
  if (heldHere.has(lockFile)) throw new DatabaseInUseError(dataDir, process.pid)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' })
      heldHere.add(lockFile)
      return () => {
        heldHere.delete(lockFile)
        fs.rmSync(lockFile, { force: true })
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
      const pid = Number(fs.readFileSync(lockFile, 'utf8'))
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DatabaseInUseError(dataDir, pid)
      }
      fs.rmSync(lockFile, { force: true }) // left behind by a process that is gone
    }
  }
  throw new Error(`Could not lock ${dataDir}`)
}

/** Closing twice (a health check that closed it, then the app) is harmless. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined
  return () => (done ??= fn())
}

/** drizzle's logger for `onQuery`; none (drizzle's no-op) when it is not asked for. */
function queryLogger({ onQuery }: { onQuery?: ((sql: string) => void) | undefined }) {
  return onQuery ? { logQuery: (query: string) => onQuery(query) } : undefined
}

/**
 * A pool of connections to a PostgreSQL server and the drizzle database over it: the primary's
 * (openDatabase), and each read replica's (db/replicas.ts), with the same settings.
 */
export async function openPostgresPool(url: string, applicationName: string, onQuery?: (sql: string) => void) {
  const { default: postgres } = await import('postgres')
  const { drizzle } = postgresDriver()
  // DateStyle and TimeZone pinned: times are read as text in ISO form, in UTC (isoMillis; the
  // listing's rows, drizzle's dates), whatever the server's defaults.
  const client = postgres(url, { max: 10, onnotice: () => {}, connection: { application_name: applicationName, DateStyle: 'ISO, MDY', TimeZone: 'UTC' } })
  const db = drizzle(client, { schema, logger: queryLogger({ onQuery }) }) as unknown as Db
  return { client, db }
}

export async function openDatabase(config: DatabaseConfig): Promise<Database> {
  if (config.kind === 'postgres') {
    installPostgresGuard() // before postgres.js first loads (db/postgres-guard.ts)
    const { default: postgres } = await import('postgres')
    const { drizzle, migrate } = postgresDriver()
    const { client, db } = await openPostgresPool(config.url, 'growthdesk', config.onQuery)
    return {
      db,
      kind: 'postgres',
      async migrate() {
        // An advisory lock lets several processes start at once against one server.
        const lock = await client.reserve()
        try {
          await lock`select pg_advisory_lock(7369826193)`
          await migrate(drizzle(client), { migrationsFolder })
        } finally {
          await lock`select pg_advisory_unlock(7369826193)`.catch(() => {})
          lock.release()
        }
      },
      async ping() {
        await db.execute(sql`select 1`)
      },
      async listen(channel, handlers) {
        // A connection of its own, outside the pool, that says when it closes (the pool's
        // client.listen reconnects silently, and a notification sent meanwhile is lost unseen).
        let stopped = false
        let retry: NodeJS.Timeout | undefined
        const again = () => {
          clearTimeout(retry)
          if (!stopped) retry = setTimeout(connect, LISTEN_RETRY_MS).unref()
        }
        const listener = postgres(config.url, {
          max: 1,
          idle_timeout: 0, // 0: never closed for idleness or age
          max_lifetime: 0,
          fetch_types: false,
          onnotice: () => {},
          connection: { application_name: 'growthdesk-listen' },
          onclose: () => {
            if (stopped) return
            handlers.down()
            again()
          },
          // postgres.js passes it to the connection, though its types leave it out.
          ...({ onnotify: (name: string, payload: string) => name === channel && handlers.notify(payload) } as object),
        })
        const connect = async () => {
          try {
            await listener.unsafe(`listen "${channel.replace(/"/g, '""')}"`)
            if (!stopped) handlers.up()
          } catch {
            handlers.down()
            again()
          }
        }
        await connect()
        return async () => {
          stopped = true
          clearTimeout(retry)
          await listener.end({ timeout: 1 }).catch(() => {})
        }
      },
      async close() {
        await client.end({ timeout: 5 })
      },
    }
  }
  const { PGlite, NodeFS, drizzle, migrate, extensions } = pgliteDriver()
  const unlock = config.dataDir ? lockDataDir(config.dataDir) : () => {}
  let client: InstanceType<typeof PGlite>
  try {
    // An empty folder becomes a copy of the migrated template, when there is one (no initdb).
    if (config.dataDir) copyTemplate(config.dataDir, LOCK_FILE)
    const sync = config.dataDir !== undefined && config.sync !== false
    client = new PGlite({
      fs: config.dataDir === undefined ? undefined : sync ? syncedNodeFS(NodeFS, config.dataDir) : new NodeFS(config.dataDir),
      // PostgreSQL's 128 MB default lives inside PGlite's WebAssembly memory, which never
      // shrinks: an embedded server of one process does well with a quarter of it.
      postgresqlconf: ['shared_buffers=32MB'],
      extensions,
      // PGlite starts PostgreSQL with -F (fsync off). Durable: without -F, with WAL flushes by
      // fsync(2) (which syncedNodeFS makes real).
      startParams: sync ? [...PGlite.defaultStartParams.filter((p) => p !== '-F'), '-c', 'wal_sync_method=fsync'] : undefined,
    })
    await client.waitReady
    // The session's settings the text of times depends on (isoMillis), as every PostgreSQL
    // connection pins them. PGlite's defaults (GMT, ISO) write the same text, and its one session
    // does not take up a database's settings today; another release could change either.
    await client.exec("set timezone to 'UTC'; set datestyle to 'ISO, MDY'")
  } catch (err) {
    unlock()
    throw err
  }
  const writes = watchWrites(client as unknown as WatchedClient, new WriteHealth(config.dataDir))
  const db = drizzle(client, { schema, logger: queryLogger(config) }) as unknown as Db
  return {
    db,
    kind: 'pglite',
    writeProblem() {
      writes.probe()
      return writes.problem
    },
    async migrate() {
      await migrate(drizzle(client), { migrationsFolder })
    },
    async ping() {
      await client.query('select 1')
    },
    async listen(channel, handlers) {
      // One connection, in this process: a notification arrives with the statement that sent it.
      const unlisten = await client.listen(channel, handlers.notify)
      handlers.up()
      return async () => {
        await unlisten().catch(() => {})
      }
    },
    close: once(async () => {
      try {
        await client.close()
      } finally {
        unlock()
      }
    }),
  }
}

/**
 * Watches what the embedded database says of its writes: any failure for a full disk marks it
 * unable to write, a statement that writes and succeeds clears the mark. PostgreSQL is not
 * watched: a server's disk is its operator's to watch, and a full one still answers 503 per request.
 */
function watchWrites(client: WatchedClient, health: WriteHealth): WriteHealth {
  const isWrite = (text: unknown) => typeof text === 'string' && /^\s*(insert|update|delete)\b/i.test(text)
  const watch = <K extends keyof WatchedClient>(name: K, wrap: (original: WatchedClient[K]) => WatchedClient[K]) => {
    client[name] = wrap(client[name].bind(client) as WatchedClient[K])
  }
  const noted = async <T>(run: () => Promise<T>, wrote: () => boolean): Promise<T> => {
    try {
      const result = await run()
      if (health.problem && wrote()) health.wrote()
      return result
    } catch (err) {
      health.failed(err)
      throw err
    }
  }
  watch('query', (query) => (text, ...rest) => noted(() => query(text, ...rest), () => isWrite(text)))
  watch('exec', (exec) => (text, ...rest) => noted(() => exec(text, ...rest), () => false))
  // A transaction that wrote and committed: its statements go through its own handle.
  watch('transaction', (transaction) => (fn) => {
    let wrote = false
    return noted(() => transaction((tx) => {
      const query = tx.query.bind(tx)
      tx.query = (text, ...rest) => {
        if (isWrite(text)) wrote = true
        return query(text, ...rest)
      }
      return fn(tx)
    }), () => wrote)
  })
  return health
}

interface WatchedTx {
  query(text: string, ...rest: unknown[]): Promise<unknown>
}

interface WatchedClient extends WatchedTx {
  exec(text: string, ...rest: unknown[]): Promise<unknown>
  transaction(fn: (tx: WatchedTx) => Promise<unknown>): Promise<unknown>
}

/**
 * The migrated PGlite folder that empty data folders are copied from (db/pglite-template.ts),
 * built here — initdb and the migrations — when there is none yet.
 */
export function pgliteTemplate(): Promise<string> {
  return ensureTemplate(async (folder) => {
    const database = await openDatabase({ kind: 'pglite', dataDir: folder })
    try {
      await database.migrate()
    } finally {
      await database.close()
    }
  })
}
