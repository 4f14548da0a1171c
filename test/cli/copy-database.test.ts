// `admin copy-database`: an embedded deployment with data (a workspace, demo opportunities and
// reviews, 30 days of events, a memory) copied into a new PostgreSQL database, where the same key
// answers the same results, every table holds the same rows, and new rows get fresh ids; a target
// that holds data already is refused and left as it was.
import t, { type Test } from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { randomBytes } from 'node:crypto'
import postgres from 'postgres'
import { main } from '../../bin/cli.ts'
import { buildApp } from '../../app.ts'
import { openDatabase } from '../../db/client.ts'
import { bearer, TEST_SECRETS_KEY_TEXT, testConfig } from '../helpers/app.ts'

t.setTimeout(300_000)

// The PostgreSQL server of the suite's run, or the machine's (this test needs one either way).
const SERVER = process.env.DATABASE_URL && process.env.DATABASE_URL.startsWith('postgres') ? process.env.DATABASE_URL : 'postgres://postgres@127.0.0.1:5432/postgres'

async function cli(env: NodeJS.ProcessEnv, ...argv: string[]) {
  let stdout = ''
  let stderr = ''
  const code = await main(argv, { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: (s: string) => (stderr += s) }, env })
  return { code, stdout, stderr }
}

async function serverUp(): Promise<boolean> {
  const sql = postgres(SERVER, { max: 1, onnotice: () => {}, connect_timeout: 3 })
  try {
    await sql`select 1`
    return true
  } catch {
    return false
  } finally {
    await sql.end({ timeout: 1 })
  }
}

async function newDatabase(t: Test): Promise<string> {
  const name = `gd_copy_${randomBytes(5).toString('hex')}`
  const admin = postgres(SERVER, { max: 1, onnotice: () => {} })
  await admin.unsafe(`create database ${name}`)
  await admin.end()
  t.teardown(async () => {
    const sql = postgres(SERVER, { max: 1, onnotice: () => {} })
    await sql.unsafe(`drop database if exists ${name} with (force)`)
    await sql.end()
  })
  const url = new URL(SERVER)
  url.pathname = `/${name}`
  return url.toString()
}

/** Every table's row count, and an order-free digest of its rows. */
async function contents(url: string | undefined, dataDir?: string) {
  const database = await openDatabase(url ? { kind: 'postgres', url } : { kind: 'pglite', dataDir })
  try {
    const { sql } = await import('../../db/orm.ts')
    const { rowsOf } = await import('../../db/client.ts')
    const tables = rowsOf<{ name: string }>(await database.db.execute(sql`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition order by 1`)).map((r) => r.name)
    const out: Record<string, { rows: number; digest: string }> = {}
    for (const table of tables) {
      const [row] = rowsOf<{ rows: number; digest: string | null }>(await database.db.execute(sql.raw(
        `select count(*)::int as rows, md5(string_agg(md5(t::text), '' order by md5(t::text))) as digest from "${table}" t`)))
      out[table] = { rows: row!.rows, digest: row!.digest ?? '' }
    }
    return out
  } finally {
    await database.close()
  }
}

const up = await serverUp()

t.test('an embedded deployment moves to PostgreSQL with its data', { skip: !up && `needs a PostgreSQL server (${SERVER})` }, async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-copy-'))
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }))
  const env = { DATA_DIR: dataDir, SECRETS_KEY: TEST_SECRETS_KEY_TEXT }

  const boot = await cli(env, 'admin', 'bootstrap', '--workspace', 'Acme', '--email', 'ana@acme.test', '--project', 'Acme App', '--json')
  t.equal(boot.code, 0, boot.stderr)
  const { keys, project } = JSON.parse(boot.stdout)
  const seeded = await cli(env, 'admin', 'seed-demo', '--project', project.slug, '--json')
  t.equal(seeded.code, 0, seeded.stderr)

  // What the embedded deployment answers, before the move.
  const reads = async (database: Parameters<typeof testConfig>[0]) => {
    const app = await buildApp({ config: testConfig(database), logger: false })
    try {
      await app.ready()
      const get = (url: string) => app.inject({ method: 'GET', url, headers: bearer(keys.mcp) })
      const ops = await get(`/api/v1/mcp/projects/${project.id}/daily-ops?window=30d`)
      const list = await get(`/api/v1/mcp/projects/${project.id}/opportunities?page_size=100`)
      t.equal(ops.statusCode, 200, ops.body)
      t.equal(list.statusCode, 200, list.body)
      return { ops: ops.json(), list: list.json() }
    } finally {
      await app.close()
    }
  }
  const before = await reads({ kind: 'pglite', dataDir })
  t.ok(before.list.total > 0 && before.ops.days.some((d: { daily_use_events: number }) => d.daily_use_events > 0), 'the source has opportunities and events')

  const target = await newDatabase(t)
  const copied = await cli(env, 'admin', 'copy-database', '--to', target, '--json')
  t.equal(copied.code, 0, copied.stderr)
  const result = JSON.parse(copied.stdout)
  t.ok(result.rows > 1000, `${result.rows} rows copied`)
  t.match(copied.stderr, /events: \d+ rows/, 'progress a line per table')

  t.same(await contents(target), await contents(undefined, dataDir), 'every table holds the same rows')

  const after = await reads({ kind: 'postgres', url: target })
  t.same(after, before, 'the same key reads the same metrics and listing')

  // New rows continue the source's sequences (no id taken twice).
  const app = await buildApp({ config: testConfig({ kind: 'postgres', url: target }), logger: false })
  t.teardown(() => app.close())
  await app.ready()
  const ingest = await app.inject({
    method: 'POST',
    url: '/v1/events',
    headers: { ...bearer(keys.ingest), 'content-type': 'application/json' },
    payload: { events: [{ event: 'daily_use', distinct_id: 'after-the-move' }] },
  })
  t.equal(ingest.statusCode, 200, ingest.body)
  const submitted = await app.inject({
    method: 'POST',
    url: `/api/v1/mcp/projects/${project.id}/opportunities`,
    headers: { ...bearer(keys.mcp), 'content-type': 'application/json' },
    payload: { contribution_type: 'content_idea', key_information: 'written after the move', reason: 'r', suggested_action: 's' },
  })
  t.equal(submitted.statusCode, 201, submitted.body)

  // A target with data is refused, and keeps what it has.
  const snapshot = await contents(target)
  const again = await cli(env, 'admin', 'copy-database', '--to', target)
  t.equal(again.code, 1)
  t.match(again.stderr, /holds data already \(1 workspace\)/)
  t.same(await contents(target), snapshot, 'the refused target is unchanged')
})

t.test('--to must be a PostgreSQL URL', async (t) => {
  const r = await cli({ DATABASE_URL: 'memory://' }, 'admin', 'copy-database', '--to', '/tmp/somewhere')
  t.equal(r.code, 2)
  t.match(r.stderr, /--to must be a postgres:\/\/ URL/)
})
