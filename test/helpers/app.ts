// Builds the app for one test file on a database of its own: in-memory PGlite by default,
// or a fresh database on the PostgreSQL server named by DATABASE_URL (dropped afterwards).
import { randomBytes, randomUUID } from 'node:crypto'
import postgres from 'postgres'
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import { buildApp } from '../../app.ts'
import type { Config, Database } from '../../config.ts'
import { bootstrap, createUser, type BootstrapResult } from '../../core/admin.ts'
import type { Role } from '../../schemas/atoms.ts'

interface Teardown {
  teardown(fn: () => unknown): void
}

export const PUBLIC_URL = 'http://127.0.0.1:3000'

/** A database for one test file, and how to get rid of it. */
export async function testDatabase(t: Teardown): Promise<Database> {
  const url = process.env.DATABASE_URL
  if (!url || url === 'memory://') return { kind: 'pglite', dataDir: undefined }
  const name = `gd_test_${randomBytes(6).toString('hex')}`
  const admin = postgres(url, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  t.teardown(async () => {
    const sql = postgres(url, { max: 1, onnotice: () => {} })
    await sql.unsafe(`drop database if exists ${name} with (force)`)
    await sql.end()
  })
  const target = new URL(url)
  target.pathname = `/${name}`
  return { kind: 'postgres', url: target.toString() }
}

export function testConfig(database: Database, overrides: Partial<Config> = {}): Config {
  return { host: '127.0.0.1', port: 0, publicUrl: PUBLIC_URL, database, allowedOrigins: [], trustProxy: false, logLevel: 'silent', ...overrides }
}

export interface TestAppOptions {
  now?: () => Date
  config?: Partial<Config>
}

export async function buildTestApp(t: Teardown, options: TestAppOptions = {}): Promise<FastifyInstance> {
  const database = await testDatabase(t)
  const app = await buildApp({ config: testConfig(database, options.config), logger: false, now: options.now })
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

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` })

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
    method: 'POST', url: '/v1/events', headers: bearer(ingestKey),
    payload: { events: events.map(([event, distinct_id, timestamp]) => ({ event, distinct_id, timestamp, uuid: randomUUID() })) },
  })
  if (res.statusCode !== 200) throw new Error(`ingest: ${res.statusCode} ${res.body}`)
  return res.json() as { accepted: number; duplicates: number }
}
