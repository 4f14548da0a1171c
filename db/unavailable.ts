// What "the database is unavailable" looks like, however the driver reports it: the one place
// that tells a lost connection or a full disk (answered 503 with Retry-After, a read tried once
// more) from every other failure (a 500). Errors reach here wrapped by drizzle (`DrizzleQueryError`
// whose `cause` is the driver's error), so each test walks the `cause` chain, as isUniqueViolation does.
import fs from 'node:fs'
import path from 'node:path'

/** postgres.js's own codes for a connection it lost or could not open (node_modules/postgres/src/errors.js, connection.js), and the socket's. */
const LOST_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'ECONNRESET', 'ECONNREFUSED', 'EPIPE'])

/** PostgreSQL's: 57P01 admin_shutdown (pg_terminate_backend), 57P02 crash_shutdown, 57P03 cannot_connect_now. */
const SHUTDOWN_STATES = new Set(['57P01', '57P02', '57P03'])

function * causes(err: unknown): Generator<{ code?: unknown; message?: unknown }> {
  let depth = 0
  for (let e = err as { code?: unknown; cause?: unknown } | undefined; e && typeof e === 'object' && depth < 8; e = e.cause as typeof e, depth++) yield e
}

/** The connection to the database was lost, or could not be made: a statement may not have run. */
export function isConnectionLost(err: unknown): boolean {
  for (const e of causes(err)) {
    if (typeof e.code !== 'string') continue
    // Class 08: connection exceptions (08000, 08003, 08006, …).
    if (LOST_CODES.has(e.code) || SHUTDOWN_STATES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code)) return true
  }
  return false
}

/** The database could not write because its disk is full: PostgreSQL's 53100 (PGlite reports
 * `could not extend file "base/…": No space left on device` with it), or the file system's ENOSPC. */
export function isDiskFull(err: unknown): boolean {
  for (const e of causes(err)) {
    // Codes only: a message may quote the statement and its parameters (a user's text).
    if (e.code === '53100' || e.code === 'ENOSPC') return true
  }
  return false
}

/** Why a failure means "unavailable, retry later", or undefined for any other failure. */
export function unavailableReason(err: unknown): 'connection_lost' | 'disk_full' | undefined {
  return isConnectionLost(err) ? 'connection_lost' : isDiskFull(err) ? 'disk_full' : undefined
}

/**
 * Whether the embedded database can write. A write that fails for a full disk marks it unable
 * (`/health` answers 503 with the reason); a write that succeeds later, or a probe of the data
 * folder that can write again (`probe`, run by `/health` while marked), clears the mark.
 */
export class WriteHealth {
  problem: string | undefined
  readonly #dataDir: string | undefined

  constructor(dataDir: string | undefined) {
    this.#dataDir = dataDir
  }

  /** Notes a failed statement: only a full disk counts. */
  failed(err: unknown): void {
    if (isDiskFull(err)) this.problem = `The embedded database cannot write: its disk is full (${diskFullText(err)}).`
  }

  wrote(): void {
    this.problem = undefined
  }

  /**
   * While marked: writes and removes a 64 KiB file beside the database (a page-sized extension,
   * as PostgreSQL's own writes need); when the disk takes it, the mark is cleared.
   */
  probe(): void {
    if (!this.problem || !this.#dataDir) return
    const file = path.join(this.#dataDir, 'growthdesk.probe')
    let fd: number | undefined
    try {
      fd = fs.openSync(file, 'w')
      fs.writeSync(fd, Buffer.alloc(64 * 1024))
      this.problem = undefined
    } catch {
      // Still full.
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
      fs.rmSync(file, { force: true })
    }
  }
}

function diskFullText(err: unknown): string {
  for (const e of causes(err)) if ((e.code === '53100' || e.code === 'ENOSPC') && typeof e.message === 'string') return e.message.trim()
  return 'No space left on device'
}
