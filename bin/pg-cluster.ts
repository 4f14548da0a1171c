// Throwaway PostgreSQL servers from Debian's binaries, on loopback, in temporary folders: a
// primary and its streaming replicas, for `npm run drill` and the replica tests. Run as root,
// the servers run as the `postgres` user (PostgreSQL refuses root); as any other user, as that user.
import { execFile, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** Where Debian keeps PostgreSQL 15's programs (PG_BIN overrides). */
export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin'

const asRoot = process.getuid?.() === 0

/** Why throwaway clusters cannot be made here (no binaries, no postgres user), or null when they can. */
export function clusterUnavailable(): string | null {
  if (!fs.existsSync(path.join(PG_BIN, 'initdb'))) return `no PostgreSQL binaries in ${PG_BIN} (Debian's postgresql-15; PG_BIN to use others)`
  if (asRoot && spawnSync('id', ['-u', 'postgres']).status !== 0) return 'running as root, and there is no postgres user to run the servers as'
  return null
}

/** A free TCP port on loopback (asked of the kernel, then released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}

/** Runs one of PostgreSQL's programs, as the postgres user when this process is root. */
async function pg(program: string, args: string[], options: { timeoutMs?: number } = {}) {
  const file = path.join(PG_BIN, program)
  const [cmd, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args]
  return run(cmd, argv, { timeout: options.timeoutMs ?? 120_000, maxBuffer: 16 * 1024 * 1024 })
}

export interface PgServer {
  name: string
  port: number
  dataDir: string
  /** A postgres:// URL of a database on it (default `postgres`). */
  url(database?: string): string
  /** Runs SQL through psql and answers its unaligned, tuples-only output, trimmed. */
  psql(sqlText: string, database?: string): Promise<string>
  start(): Promise<void>
  /** pg_ctl stop: `fast` (default; disconnects clients, a clean shutdown) or `immediate` (a crash). */
  stop(mode?: 'fast' | 'immediate'): Promise<void>
  /** Ends recovery: the replica becomes a primary (waits until it accepts writes). */
  promote(): Promise<void>
  pauseReplay(): Promise<void>
  resumeReplay(): Promise<void>
  /** The last checkpoint's WAL location from pg_controldata (after a clean stop: the end of its WAL). */
  checkpointLsn(): Promise<string>
  /** The server log so far (for a failure's message). */
  log(): string
}

export interface ClusterOptions {
  /** The folder the servers' folders go in (default: a new one in the OS's temp folder). */
  root?: string
  /** Settings written into postgresql.conf (beside the ones this module needs). */
  settings?: Record<string, string | number>
}

const BASE_SETTINGS: Record<string, string | number> = {
  listen_addresses: "'127.0.0.1'",
  wal_level: 'replica',
  max_wal_senders: 10,
  max_replication_slots: 10,
  hot_standby: 'on',
  hot_standby_feedback: 'on',
  wal_keep_size: "'256MB'",
  max_connections: 200,
  shared_buffers: "'64MB'",
  // Throwaway servers: a crash of the machine loses them anyway.
  fsync: 'off',
  synchronous_commit: 'on',
  full_page_writes: 'off',
  log_min_messages: 'warning',
}

function conf(settings: Record<string, string | number>): string {
  return Object.entries(settings).map(([k, v]) => `${k} = ${v}`).join('\n') + '\n'
}

/** A folder the postgres user owns (when root), for the servers' data folders. */
function makeRoot(root?: string): string {
  const dir = root ?? fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-pg-'))
  fs.mkdirSync(dir, { recursive: true })
  if (asRoot) spawnSync('chown', ['postgres:postgres', dir])
  return dir
}

function server(name: string, port: number, dataDir: string): PgServer {
  const logFile = path.join(dataDir, '..', `${name}.log`)
  const self: PgServer = {
    name,
    port,
    dataDir,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async psql(sqlText, database = 'postgres') {
      const { stdout } = await pg('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', database, '-XAtq', '-v', 'ON_ERROR_STOP=1', '-c', sqlText])
      return stdout.trim()
    },
    async start() {
      await pg('pg_ctl', ['-D', dataDir, '-l', logFile, '-w', '-t', '60', 'start'])
    },
    async stop(mode = 'fast') {
      await pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop'])
    },
    async promote() {
      await pg('pg_ctl', ['-D', dataDir, '-w', '-t', '60', 'promote'])
      for (let i = 0; i < 600; i++) {
        if ((await self.psql('select pg_is_in_recovery()')) === 'f') return
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      throw new Error(`${name} did not leave recovery after promotion`)
    },
    async pauseReplay() {
      await self.psql('select pg_wal_replay_pause()')
    },
    async resumeReplay() {
      await self.psql('select pg_wal_replay_resume()')
    },
    async checkpointLsn() {
      const { stdout } = await pg('pg_controldata', ['-D', dataDir])
      const lsn = /^Latest checkpoint location:\s*(\S+)$/m.exec(stdout)?.[1]
      if (!lsn) throw new Error(`pg_controldata of ${name} names no checkpoint location`)
      return lsn
    },
    log() {
      try {
        return fs.readFileSync(logFile, 'utf8')
      } catch {
        return ''
      }
    },
  }
  return self
}

/** initdb, settings, start: a primary on a free port that replicas can stream from. */
export async function createPrimary(options: ClusterOptions & { name?: string } = {}): Promise<PgServer> {
  const root = makeRoot(options.root)
  const name = options.name ?? 'primary'
  const dataDir = path.join(root, name)
  const port = await freePort()
  await pg('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C'])
  fs.appendFileSync(dataDir + '/postgresql.conf', conf({ ...BASE_SETTINGS, ...options.settings, port, unix_socket_directories: `'${dataDir}'` }))
  const primary = server(name, port, dataDir)
  await primary.start()
  return primary
}

/** pg_basebackup of `primary` (-R: it streams from it), started on a free port. */
export async function createReplica(primary: PgServer, options: ClusterOptions & { name?: string } = {}): Promise<PgServer> {
  const root = path.dirname(primary.dataDir)
  const name = options.name ?? 'replica'
  const dataDir = path.join(root, name)
  const port = await freePort()
  await pg('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync'])
  // The copy's postgresql.conf is the primary's: its own port and socket folder go last (the last one wins).
  fs.appendFileSync(dataDir + '/postgresql.conf', conf({ ...options.settings, port, unix_socket_directories: `'${dataDir}'` }))
  const replica = server(name, port, dataDir)
  await replica.start()
  return replica
}

/** Stops the servers (immediately: they are thrown away) and removes their folder. */
export async function destroyCluster(...servers: PgServer[]): Promise<void> {
  for (const s of servers) await s.stop('immediate').catch(() => {})
  const roots = new Set(servers.map((s) => path.dirname(s.dataDir)))
  for (const root of roots) fs.rmSync(root, { recursive: true, force: true })
}
