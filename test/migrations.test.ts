import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { is, sql, PgTable, getTableConfig } from '../db/orm.ts'
import { buildApp } from '../app.ts'
import { DatabaseInUseError, openDatabase, pgliteTemplate, rowsOf, type Db } from '../db/client.ts'
import { copyTemplate } from '../db/pglite-template.ts'
import * as schemaModule from '../db/schema.ts'
import { bearer, buildTestApp, seedWorkspace, testConfig, testDatabase } from './helpers/app.ts'

const journal = JSON.parse(fs.readFileSync(path.join(import.meta.dirname, '../db/migrations/meta/_journal.json'), 'utf8')) as {
  entries: { tag: string }[]
}

/** Every table db/schema.ts declares, exported or not in its `schema` object. */
const declared = (Object.values(schemaModule) as unknown[])
  .filter((value): value is PgTable => is(value, PgTable))
  .map((table) => getTableConfig(table))
const EXPECTED_TABLES = declared.map((c) => c.name).sort()

/** The tables of issue 2's foundation; later work adds to these, never removes them. */
const CORE_TABLES = [
  'api_keys',
  'daily_event_counts',
  'daily_event_users',
  'events',
  'memberships',
  'memories',
  'opportunities',
  'opportunity_counts',
  'project_event_stats',
  'projects',
  'review_history',
  'user_activity',
  'users',
  'workspaces',
]

async function tables(db: Db): Promise<string[]> {
  const result = await db.execute(
    // The raw events' month partitions (migration 0020) are part of events, not tables of their own.
    sql`select table_name from information_schema.tables t where table_schema = 'public' and table_type = 'BASE TABLE'
      and not exists (select 1 from pg_class c where c.relname = t.table_name and c.relispartition) order by table_name`
  )
  return rowsOf<{ table_name: string }>(result).map((r) => r.table_name)
}

async function columns(db: Db, table: string): Promise<string[]> {
  const result = await db.execute(
    sql`select column_name from information_schema.columns where table_schema = 'public' and table_name = ${table} order by column_name`
  )
  return rowsOf<{ column_name: string }>(result).map((r) => r.column_name)
}

async function appliedMigrations(db: Db): Promise<number> {
  const result = await db.execute(sql`select count(*)::int as n from drizzle.__drizzle_migrations`)
  return rowsOf<{ n: number }>(result)[0]!.n
}

function tmpDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-test-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

t.test('migrations on the backend under test', async (t) => {
  const app = await buildTestApp(t, { emptyDatabase: true })
  t.equal(app.database.kind, process.env.DATABASE_URL && process.env.DATABASE_URL !== 'memory://' ? 'postgres' : 'pglite')

  t.test('create exactly the tables of the schema, with its columns', async (t) => {
    t.same(await tables(app.db), EXPECTED_TABLES, 'the migrations create the tables db/schema.ts declares, no more, no less')
    t.same(CORE_TABLES.filter((name) => !EXPECTED_TABLES.includes(name)), [], 'the foundation tables are all there')
    t.same(
      Object.values(schemaModule.schema).map((table) => getTableConfig(table).name).sort(),
      EXPECTED_TABLES,
      'the `schema` object given to drizzle holds every table'
    )
    for (const config of declared) {
      t.same(await columns(app.db, config.name), config.columns.map((c) => c.name).sort(), `${config.name}: columns match db/schema.ts`)
    }
    t.equal(await appliedMigrations(app.db), journal.entries.length, 'every migration of the journal is recorded')
  })

  t.test('status and evaluation hold only their wire values', async (t) => {
    const checks = declared.flatMap((c) => c.checks.map((k) => k.name)).sort()
    const result = await app.db.execute(sql`select conname from pg_constraint where contype = 'c' and connamespace = 'public'::regnamespace order by conname`)
    t.same(rowsOf<{ conname: string }>(result).map((r) => r.conname), checks, 'the CHECK constraints of db/schema.ts exist')
    t.same(checks, [
      'alert_events_kind_check', 'alerts_condition_check', 'alerts_metric_check', 'alerts_state_check',
      'app_secrets_value_sealed_check', 'comments_body_length', 'digests_frequency_check', 'digests_hour_check', 'digests_weekday_check',
      'invitation_projects_role_check', 'opportunities_evaluation_check', 'opportunities_not_merged_into_itself',
      'opportunities_report_count_check', 'opportunities_status_check', 'opportunity_counts_evaluation_check', 'opportunity_counts_status_check', 'webhook_deliveries_status_check',
      'webhooks_format_check', 'webhooks_rate_limit_check', 'webhooks_secret_sealed_check', 'webhooks_signature_schemes_check', 'webhooks_signing_key_sealed_check',
    ])
    const ws = await seedWorkspace(app)
    const insert = (status: string, evaluation: string) =>
      app.db.execute(sql`insert into opportunities (id, project_id, contribution_type, key_information, reason, suggested_action, status, evaluation)
        values (${`opp_check${status.length}${evaluation.length}`}, ${ws.project.id}, 'lead', 'k', 'r', 's', ${status}, ${evaluation})`)
    const code = (err: unknown) => {
      for (let e = err as { code?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) if (e.code) return e.code
    }
    t.equal(code(await insert('bogus', '').catch((err: unknown) => err)), '23514', 'an unknown status is refused')
    t.equal(code(await insert('pending', 'maybe').catch((err: unknown) => err)), '23514', 'an unknown evaluation is refused')
    await insert('done', '')
    t.pass('known values, the empty evaluation included, are stored')
  })

  t.test('applying them again changes nothing', async (t) => {
    const ws = await seedWorkspace(app)
    await app.database.migrate()
    await Promise.all([app.database.migrate(), app.database.migrate()])
    t.equal(await appliedMigrations(app.db), journal.entries.length)
    t.same(await tables(app.db), EXPECTED_TABLES)
    const res = await app.inject({ method: 'GET', url: `/api/v1/mcp/projects/${ws.project.id}/daily-ops`, headers: bearer(ws.keys.mcp) })
    t.equal(res.statusCode, 200, 'data written before is still there')
  })

  t.test('two processes migrating one fresh PostgreSQL database at once', { skip: app.database.kind !== 'postgres' && 'PostgreSQL only' }, async (t) => {
    const database = await testDatabase(t, { empty: true })
    const [a, b] = await Promise.all([openDatabase(database), openDatabase(database)])
    t.teardown(async () => {
      await a!.close()
      await b!.close()
    })
    await Promise.all([a!.migrate(), b!.migrate()])
    t.equal(await appliedMigrations(a!.db), journal.entries.length)
    t.same(await tables(b!.db), EXPECTED_TABLES)
  })
  t.end()
})

// One folder through its whole life (each PGlite start on disk costs seconds): refused while
// another live process holds the lock, taken over once that process is gone, then data
// written before a close is there after a reopen.
t.test('an on-disk embedded database: the lock, then a restart with data intact', async (t) => {
  const dataDir = tmpDir(t)
  const config = testConfig({ kind: 'pglite', dataDir })
  const lockFile = path.join(dataDir, 'growthdesk.pid')

  const other = spawn('sleep', ['30'], { stdio: 'ignore' })
  const exited = new Promise<void>((resolve) => other.on('exit', () => resolve()))
  t.teardown(() => {
    if (other.exitCode === null && other.signalCode === null) other.kill()
  })
  t.ok(other.pid)
  fs.writeFileSync(lockFile, String(other.pid))

  const refused = await openDatabase({ kind: 'pglite', dataDir }).then(
    () => undefined,
    (err: unknown) => err
  )
  t.type(refused, DatabaseInUseError, 'a second process is kept out')
  t.equal(
    (refused as Error).message,
    `The embedded database in ${dataDir} is in use by another growthdesk process (pid ${other.pid}). ` +
      'Stop that process first, or set DATABASE_URL to a PostgreSQL server, which many processes can share.'
  )
  await t.rejects(buildApp({ config, logger: false }), DatabaseInUseError, 'the app refuses to start too')
  t.equal(fs.readFileSync(lockFile, 'utf8'), String(other.pid), "the other process's lock is left alone")

  other.kill()
  await exited
  const first = await buildApp({ config, logger: false })
  let firstClosed = false
  t.teardown(() => (firstClosed ? undefined : first.close()))
  t.equal(fs.readFileSync(lockFile, 'utf8'), String(process.pid), 'a lock left by a process that is gone is taken over')
  const ws = await seedWorkspace(first)
  const submitted = await first.inject({
    method: 'POST',
    url: `/api/v1/mcp/projects/${ws.project.id}/opportunities`,
    headers: bearer(ws.keys.mcp),
    payload: { contribution_type: 'partnership', key_information: 'Kept across restarts', reason: 'r', suggested_action: 's' },
  })
  t.equal(submitted.statusCode, 201)
  await first.close()
  firstClosed = true
  t.notOk(fs.existsSync(lockFile), 'closing releases the lock')

  fs.writeFileSync(lockFile, 'not a pid')
  const second = await buildApp({ config, logger: false })
  t.teardown(() => second.close())
  t.equal(fs.readFileSync(lockFile, 'utf8'), String(process.pid), 'an unreadable lock is taken over')
  t.equal(await second.repos.workspaces.count(), 1)
  t.equal(await appliedMigrations(second.db), journal.entries.length, 'no migration ran twice')
  const list = await second.inject({
    method: 'GET',
    url: `/api/v1/mcp/projects/${ws.project.id}/opportunities`,
    headers: bearer(ws.keys.mcp),
  })
  t.equal(list.statusCode, 200, 'the key from before the restart still works')
  t.same(list.json().items.map((o: { event_id: string; key_information: string }) => [o.event_id, o.key_information]), [
    [submitted.json().event_id, 'Kept across restarts'],
  ])
})

// A new data folder is a copy of the migrated template (db/pglite-template.ts), not an initdb.
t.test('an empty data folder starts as a copy of the migrated template', async (t) => {
  const template = await pgliteTemplate()
  t.ok(fs.existsSync(path.join(template, 'PG_VERSION')), 'the template is a PostgreSQL data folder')

  const dataDir = tmpDir(t)
  const database = await openDatabase({ kind: 'pglite', dataDir })
  t.teardown(() => database.close())
  t.equal(await appliedMigrations(database.db), journal.entries.length, 'migrated before any migration ran here')
  t.same(await tables(database.db), EXPECTED_TABLES)
  t.notOk(fs.existsSync(path.join(dataDir, 'growthdesk.copying')), 'the copy finished')

  t.test('a folder holding anything else is left alone', async (t) => {
    const other = tmpDir(t)
    fs.writeFileSync(path.join(other, 'notes.txt'), 'mine')
    t.equal(copyTemplate(other, 'growthdesk.pid'), false)
    t.same(fs.readdirSync(other), ['notes.txt'])
  })

  t.test('a secrets key file put there before the first start stays, and the copy is made', async (t) => {
    const provisioned = tmpDir(t)
    fs.writeFileSync(path.join(provisioned, 'secrets.key'), 'the key\n')
    t.equal(copyTemplate(provisioned, 'growthdesk.pid'), true)
    t.equal(fs.readFileSync(path.join(provisioned, 'secrets.key'), 'utf8'), 'the key\n')
    t.ok(fs.existsSync(path.join(provisioned, 'PG_VERSION')))
  })

  t.test('an interrupted copy is removed and made again', async (t) => {
    const interrupted = tmpDir(t)
    fs.writeFileSync(path.join(interrupted, 'growthdesk.pid'), String(process.pid))
    fs.writeFileSync(path.join(interrupted, 'growthdesk.copying'), '')
    fs.mkdirSync(path.join(interrupted, 'base'))
    fs.writeFileSync(path.join(interrupted, 'base', 'half-written'), 'x')
    t.equal(copyTemplate(interrupted, 'growthdesk.pid'), true)
    t.same(fs.readdirSync(interrupted).sort(), [...fs.readdirSync(template), 'growthdesk.pid'].sort(), 'the template and the lock, nothing else')
    t.notOk(fs.existsSync(path.join(interrupted, 'base', 'half-written')))
    t.equal(fs.readFileSync(path.join(interrupted, 'growthdesk.pid'), 'utf8'), String(process.pid), 'the lock is kept')
  })
})
