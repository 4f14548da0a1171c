// The database a bench runs on: its name (--db-name), its URL on the PostgreSQL server that
// BENCH_DATABASE_URL names, its creation afresh and its drop, and a cleanup that also runs on
// Ctrl-C, so that an interrupted bench leaves no database behind. What a bench then loads and
// measures stays in the bench.
import net from 'node:net'
import postgres from 'postgres'

const serverUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/**
 * postgres.js options for a socket with Nagle's algorithm off (bench/copy-stall.ts: without it a
 * COPY FROM STDIN waits ~40–88 ms for the server's delayed ACK, at any size). postgres.js takes
 * a `socket` factory (documented, though its types leave it out) and then connects nothing
 * itself; no TLS is set up here (loopback).
 */
export function noDelay(connectionUrl: string): object {
  const { hostname, port } = new URL(connectionUrl)
  return {
    socket: () => {
      const socket = net.connect(Number(port || 5432), hostname)
      socket.setNoDelay(true)
      return socket
    },
  }
}

/** A value as a field of COPY's text format: backslash, tab and line breaks escaped. */
export const copyField = (s: string) => s.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')

/** postgres.js options without the server's notices (`drop … if exists` sends one when there is nothing to drop). */
export const quiet = { onnotice: () => {} }

/**
 * Whether a name can go into `create database` as it is: a lower-case SQL identifier of at most
 * `maxLength` characters (63, PostgreSQL's limit, unless the bench appends a suffix).
 */
export function isDatabaseName(name: string, maxLength = 63): boolean {
  return name.length <= maxLength && /^[a-z_][a-z0-9_]*$/.test(name)
}

/** The --db-name value when it is a database name (see isDatabaseName); otherwise a message and exit code 2. */
export function checkDatabaseName(name: string, maxLength = 63): string {
  if (!isDatabaseName(name, maxLength)) {
    const limit = maxLength < 63 ? ` of at most ${maxLength} characters` : ''
    process.stderr.write(`--db-name must be a lower-case SQL identifier${limit} (got ${JSON.stringify(name)}).\n`)
    process.exit(2)
  }
  return name
}

/** The URL of a database on the bench's server. */
export function databaseUrl(name: string): string {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

/**
 * One connection to the server's own default database: for statements about databases, and for
 * a monitor whose backend must not count among the bench database's. The caller ends it.
 */
export function connectToServer(): postgres.Sql {
  return postgres(serverUrl, { max: 1, ...quiet })
}

/** The server's version, for a bench's header line. */
export async function serverVersion(): Promise<string> {
  const server = connectToServer()
  try {
    const [row] = await server<{ version: string }[]>`select current_setting('server_version') as version`
    return row!.version
  } finally {
    await server.end()
  }
}

/** Whether the server has a database of this name (a kept one, for --reuse). */
export async function databaseExists(name: string): Promise<boolean> {
  const server = connectToServer()
  try {
    return (await server`select 1 from pg_database where datname = ${name}`).length > 0
  } finally {
    await server.end()
  }
}

/** The database empty: dropped first when a former run (or another session) left it, then created. */
export async function recreateDatabase(name: string): Promise<void> {
  const server = connectToServer()
  try {
    await server.unsafe(`drop database if exists ${name} with (force)`)
    await server.unsafe(`create database ${name}`)
  } finally {
    await server.end()
  }
}

/**
 * Drops the databases, each even when another could not be dropped. A failure is printed, not
 * thrown, so that it cannot stop the rest of a cleanup; the answer says whether all are gone.
 */
export async function dropDatabases(names: string[]): Promise<boolean> {
  const server = connectToServer()
  let dropped = true
  try {
    for (const name of names) {
      try {
        await server.unsafe(`drop database if exists ${name} with (force)`)
      } catch (err) {
        dropped = false
        process.stdout.write(`Could not drop the database ${name}: ${String(err)}\n`)
      }
    }
  } finally {
    await server.end().catch(() => {})
  }
  return dropped
}

let signalled = false

/**
 * Prints why a bench failed, unless it was interrupted (Ctrl-C, SIGTERM): what fails then is the
 * bench's own work cut short by the cleanup (its load client killed, its database dropped).
 */
export function reportFailure(bench: string, err: unknown): void {
  if (signalled) return
  process.stderr.write(`\n${bench} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
}

/**
 * The bench's cleanup, run at most once: when the bench calls what this returns at its end, or
 * on SIGINT or SIGTERM, after which the process exits with code 130. Whichever comes second
 * waits for the same run instead of closing things twice.
 */
export function registerCleanup(cleanup: () => Promise<void>): () => Promise<void> {
  let cleaned: Promise<void> | undefined
  const once = () => (cleaned ??= cleanup())
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      signalled = true
      process.stdout.write(`\n${signal}: cleaning up…\n`)
      void once().finally(() => process.exit(130))
    })
  }
  return once
}
