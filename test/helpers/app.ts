// Builds the app for one test file on a database of its own: in-memory PGlite by default,
// or a fresh database on the PostgreSQL server named by DATABASE_URL (dropped afterwards).
import { randomBytes, randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp, type BuildOptions } from '../../app.ts'
import type { Config, Database } from '../../config.ts'
import { openDatabase, pgliteTemplate } from '../../db/client.ts'
import { templateKey } from '../../db/pglite-template.ts'
import { bootstrap, createUser, type BootstrapResult } from '../../bin/admin.ts'
import type { Role } from '../../schemas/atoms.ts'

/**
 * scrypt's cost for the users a test app creates (BuildOptions.passwordHashCost): at the
 * production cost (2^15, ~100–200 ms of CPU each) the suite's users alone took minutes of CPU.
 */
export const TEST_PASSWORD_HASH_COST = 2 ** 10

interface Teardown {
  teardown(fn: () => unknown): void
}

export const PUBLIC_URL = 'http://127.0.0.1:3000'

/**
 * What every test database starts from: the schema the migrations build, made once (and reused
 * while the migrations and PGlite stay the same) and copied for each test file. On PGlite it is
 * the template a first start copies (db/pglite-template.ts), which `npm ci` builds.
 */
/** A migrated template database on the PostgreSQL server of `url`, made once. */
export async function postgresTemplate(url: string): Promise<string> {
  const name = `gd_template_${templateKey()}`
  const admin = postgres(url, { max: 1, onnotice: () => {} })
  try {
    const [found] = await admin`select 1 from pg_database where datname = ${name}`
    if (found) return name
    const building = `${name}_${randomBytes(4).toString('hex')}`
    await admin.unsafe(`create database ${building}`)
    const target = new URL(url)
    target.pathname = `/${building}`
    const database = await openDatabase({ kind: 'postgres', url: target.toString() })
    try {
      await database.migrate()
    } finally {
      await database.close()
    }
    // A rename is atomic: a file that lost the race drops its copy and uses the winner's.
    await admin.unsafe(`alter database ${building} rename to ${name}`).catch(async (err: { code?: string }) => {
      await admin.unsafe(`drop database if exists ${building} with (force)`)
      if (err.code !== '42P04') throw err
    })
    return name
  } finally {
    await admin.end()
  }
}

/**
 * A database for one test file, and how to get rid of it: in-memory PGlite by default, or a
 * new database on the PostgreSQL server of DATABASE_URL (dropped afterwards). Migrated, unless
 * `empty` asks for one that has never seen a migration; a copy of `copyOf` (a database this
 * function made, which no app has open any more) if given.
 */
export async function testDatabase(t: Teardown, options: { empty?: boolean; copyOf?: Database } = {}): Promise<Database> {
  const url = process.env.DATABASE_URL
  const { copyOf } = options
  if (!url || url === 'memory://') {
    if (options.empty) return { kind: 'pglite', dataDir: undefined }
    if (copyOf && (copyOf.kind !== 'pglite' || !copyOf.dataDir)) throw new Error('only a PGlite folder can be copied here')
    // An empty folder, which opening fills with a copy of the template: that opens in about a
    // second; loading the same data into an in-memory PGlite (a tarball) took four to five.
    if (!copyOf) await pgliteTemplate()
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-test-db-'))
    t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    if (copyOf?.kind === 'pglite') fs.cpSync(copyOf.dataDir!, dataDir, { recursive: true })
    return { kind: 'pglite', dataDir }
  }
  if (copyOf && copyOf.kind !== 'postgres') throw new Error('only a PostgreSQL database can be copied here')
  const template = copyOf ? new URL(copyOf.url).pathname.slice(1) : options.empty ? undefined : await postgresTemplate(url)
  const name = `gd_test_${randomBytes(6).toString('hex')}`
  const admin = postgres(url, { max: 1, onnotice: () => {} })
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await admin.unsafe(`create database ${name}${template ? ` template ${template}` : ''}`)
        break
      } catch (err) {
        // 55006: another session is still connected to the template (a build that just finished).
        if ((err as { code?: string }).code !== '55006' || attempt >= 20) throw err
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }
  } finally {
    await admin.end()
  }
  t.teardown(async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    await sql.unsafe(`drop database if exists ${name} with (force)`)
    await sql.end()
  })
  const target = new URL(url)
  target.pathname = `/${name}`
  return { kind: 'postgres', url: target.toString() }
}

/**
 * GROWTHDESK_PLUGINS, as the server reads it: a plugin's author runs these suites with it set,
 * and every app they build loads the plugin, whose tools the catalogue, call, era and fuzz
 * suites then test from its examples (CI does it with the example plugin).
 */
const testPlugins = (process.env.GROWTHDESK_PLUGINS ?? '').split(',').map((p) => p.trim()).filter(Boolean)

/**
 * The server key of the secrets at rest in the apps testConfig builds: one per test process, so
 * that an app started again on the same database opens what the first one sealed. Processes a
 * test spawns get it as SECRETS_KEY (`TEST_SECRETS_KEY_TEXT`) when they share a database with it.
 */
export const TEST_SECRETS_KEY = randomBytes(32)
export const TEST_SECRETS_KEY_TEXT = TEST_SECRETS_KEY.toString('base64')

export function testConfig(database: Database, overrides: Partial<Config> = {}): Config {
  const secrets = { key: TEST_SECRETS_KEY, keyFile: null, previous: [] }
  return { production: false, host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL, database, allowedOrigins: [], trustProxy: false, logLevel: 'silent', requestTimeoutMs: 30_000, keepAliveTimeoutMs: 72_000, plugins: testPlugins, secrets, ...overrides }
}

export interface TestAppOptions extends Pick<BuildOptions, 'now' | 'mcpFastLane' | 'onMcpPath'> {
  config?: Partial<Config>
  /** A database that has never been migrated: the app's start migrates it. */
  emptyDatabase?: boolean
  /** Tool plugins, as `buildApp({ plugins })` takes them. */
  plugins?: BuildOptions['plugins']
  /** A database of testDatabase's instead of a new one (no other app may have it open). */
  database?: Database
  /** As `buildApp({ clientMetadataTimeoutMs })` takes it. */
  clientMetadataTimeoutMs?: number
}

export async function buildTestApp(t: Teardown, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const database = options.database ?? await testDatabase(t, { empty: options.emptyDatabase })
  const app = await buildApp({
    config: testConfig(database, options.config),
    logger: false,
    now: options.now,
    checkOutputs: true,
    passwordHashCost: TEST_PASSWORD_HASH_COST,
    mcpFastLane: options.mcpFastLane,
    onMcpPath: options.onMcpPath,
    plugins: options.plugins,
    clientMetadataTimeoutMs: options.clientMetadataTimeoutMs,
  })
  t.teardown(() => app.close())
  return app
}

/** A pinned, movable clock. */
export function fixedClock(iso: string) {
  let current = new Date(iso)
  const now = () => new Date(current)
  now.set = (next: string) => {
    current = new Date(next)
  }
  return now
}

/** A workspace with an owner, a project and keys (admin bootstrap). */
export async function seedWorkspace(app: FastifyInstance, name = `ws-${randomBytes(3).toString('hex')}`): Promise<BootstrapResult> {
  return bootstrap(app, { workspace: name, email: `owner@${name}.test` })
}

/** Another member of the project with the given role, and their mcp and service keys. */
export async function addMember(app: FastifyInstance, projectId: string, role: Role, email?: string) {
  return createUser(app, { email: email ?? `${role}-${randomBytes(3).toString('hex')}@example.test`, project: projectId, role })
}

/** A second project in a workspace, created directly (owned by `ownerId`). */
export async function addProject(app: FastifyInstance, input: { workspaceId: string; ownerId: string; name: string; slug: string }) {
  const result = await app.repos.projects.create(input)
  if (!result.ok) throw new Error(`project slug '${input.slug}' is taken`)
  return result.project
}

/**
 * Runs a write made behind the app's back (plain SQL, as another instance or psql would) and
 * waits until the app has heard of it: its NOTIFY arrives on another connection, a moment after
 * the commit, and only then may the app's next request be expected to see the change.
 */
export async function writeBehind(app: FastifyInstance, write: PromiseLike<unknown>): Promise<void> {
  const before = app.settingsCache.generation
  await write
  const deadline = Date.now() + 10_000
  while (app.settingsCache.generation === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1))
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

/**
 * The writes of a key's last use that requests start and do not await (plugins/auth.ts): each
 * one started is kept in `writes`, so a test knows whether one started and can await them.
 * The repository's own `touch` comes back at teardown.
 */
export function recordKeyUses(t: Teardown, app: FastifyInstance): Promise<void>[] {
  const writes: Promise<void>[] = []
  const touch = app.repos.apiKeys.touch
  app.repos.apiKeys.touch = (...args: Parameters<typeof touch>) => {
    const write = touch(...args)
    writes.push(write)
    return write
  }
  t.teardown(() => {
    app.repos.apiKeys.touch = touch
  })
  return writes
}

/** A free loopback port (briefly bound, then released). */
export async function freePort(): Promise<number> {
  const net = await import('node:net')
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number }
      srv.close(() => resolve(port))
    })
  })
}

/** The app listening on a real loopback port, with PUBLIC_URL pointing at it. */
export async function listenTestApp(t: Teardown, options: TestAppOptions = {}): Promise<{ app: FastifyInstance; url: string }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const app = await buildTestApp(t, { ...options, config: { publicUrl: url, port, ...options.config } })
  await app.listen({ host: '127.0.0.1', port })
  return { app, url }
}

/** Asserts a status; on a mismatch the message is the body, which says what went wrong. */
export function expectStatus(t: Test, res: { statusCode: number; body: string }, status: number) {
  t.equal(res.statusCode, status, res.statusCode === status ? `status ${status}` : res.body.slice(0, 500))
}

/** POST /v1/events with an ingest key: [event, distinct_id, timestamp] each with a fresh uuid; the answer, or throws unless 200. */
export async function ingestEvents(app: FastifyInstance, ingestKey: string, events: [string, string, string][]) {
  const res = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: bearer(ingestKey),
    payload: { events: events.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp, uuid: randomUUID() })) },
  })
  if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`)
  return res.json() as { accepted: number; duplicates: number }
}
