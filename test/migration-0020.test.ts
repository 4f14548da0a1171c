// Migration 0020 (raw events partitioned by month) on a copy of a database at the schema before
// it, holding events: no event lost or doubled (count, sum of the ids, every (project, uuid) once,
// a hash of every row's content), ids and sequence kept, one partition per month of the rows,
// the rollups untouched, a project's deletion still taking its events. A small set always
// (both backends); GROWTHDESK_MIGRATION_EVENTS=1000000 loads a million on the backend under test
// and reports how long the migration held its lock (docs/testing.md).
import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { sql } from '../db/orm.ts'
import { openDatabase, rowsOf, type Db } from '../db/client.ts'
import { migrationsFolder } from '../db/pglite-template.ts'
import { pgliteDriver, postgresDriver } from '../db/orm.ts'
import { testDatabase } from './helpers/app.ts'

const EVENTS = Number(process.env.GROWTHDESK_MIGRATION_EVENTS ?? 20_000)
const TAG = '0020_events_partitioned'

/** The migrations folder as it was before 0020 (without 0020 and what came after it). */
function foldersBefore(t: { teardown(fn: () => unknown): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-mig-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.cpSync(migrationsFolder, dir, { recursive: true })
  const journalFile = path.join(dir, 'meta', '_journal.json')
  const journal = JSON.parse(fs.readFileSync(journalFile, 'utf8')) as { entries: { idx: number; tag: string }[] }
  // 0020 and every migration after it (drizzle applies only what is newer than the last applied).
  const idx = journal.entries.find((e) => e.tag === TAG)!.idx
  for (const e of journal.entries.filter((e) => e.idx >= idx)) fs.rmSync(path.join(dir, `${e.tag}.sql`))
  journal.entries = journal.entries.filter((e) => e.idx < idx)
  fs.writeFileSync(journalFile, JSON.stringify(journal))
  return dir
}

const one = async <T>(db: Db, query: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(query))[0]!

/** What must survive the migration exactly. */
const fingerprint = (db: Db) => one<{ n: string; ids: string; content: string; max_id: string }>(db, sql`
  select count(*)::text as n, coalesce(sum(id), 0)::text as ids, max(id)::text as max_id,
         coalesce(sum(hashtext(id::text || project_id || uuid::text || event || distinct_id || occurred_at::text || day::text || properties::text || received_at::text || project_seq::text)::bigint), 0)::text as content
  from events`)

t.test('migration 0020 converts the events table without losing or doubling an event', async (t) => {
  const config = await testDatabase(t, { empty: true })
  const database = await openDatabase(config)
  t.teardown(() => database.close())
  const { db } = database
  const before = foldersBefore(t)
  const migrate = database.kind === 'postgres' ? postgresDriver().migrate : pgliteDriver().migrate
  await (migrate as (db: unknown, config: { migrationsFolder: string }) => Promise<void>)(db, { migrationsFolder: before })
  t.equal((await one<{ kind: string }>(db, sql`select relkind::text as kind from pg_class where relname = 'events'`)).kind, 'r', 'before: a plain table')

  // Two projects; events over 14 months (2025-10 … 2026-11), a uuid repeated on other days as the
  // old key could not hold (it was unique per project), rollups as ingestion would leave them.
  await db.execute(sql`insert into workspaces (id, name) values ('wsp_mig', 'Migration')`)
  await db.execute(sql`insert into projects (id, workspace_id, slug, name) values ('prj_mig_a', 'wsp_mig', 'mig-a', 'A'), ('prj_mig_b', 'wsp_mig', 'mig-b', 'B')`)
  const started = performance.now()
  await db.execute(sql`
    insert into events (project_id, project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at)
    select p.id, p.seq, md5(p.id || g)::uuid, case when g % 3 = 0 then 'signup' else 'daily_use' end, 'user-' || (g % 5000),
           ts, (ts at time zone 'UTC')::date, jsonb_build_object('n', g), ts + interval '1 second'
    from generate_series(1, ${EVENTS}) g
    cross join lateral (select timestamptz '2025-10-01T00:00:00Z' + (g % 420) * interval '1 day' + (g % 86400) * interval '1 second' as ts) x
    join projects p on p.id = case when g % 2 = 0 then 'prj_mig_a' else 'prj_mig_b' end`)
  await db.execute(sql`
    insert into daily_event_counts (project_id, day, event, events, unique_users)
    select project_id, day, event, count(*), count(distinct distinct_id) from events group by 1, 2, 3`)
  t.comment(`${EVENTS} events loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  const old = await fingerprint(db)
  const months = await one<{ n: number; first: string; last: string }>(db, sql`
    select count(distinct date_trunc('month', day))::int as n, to_char(min(day), 'YYYY-MM') as first, to_char(max(day), 'YYYY-MM') as last from events`)
  const rollups = await one<{ h: string }>(db, sql`select sum(hashtext(project_id || day::text || event || events::text || unique_users::text))::text as h from daily_event_counts`)

  const t0 = performance.now()
  await database.migrate()
  const seconds = (performance.now() - t0) / 1000
  t.comment(`migration 0020 over ${EVENTS} events on ${database.kind}: ${seconds.toFixed(1)} s (${(seconds / (EVENTS / 1e6)).toFixed(1)} s per million)`)

  t.equal((await one<{ kind: string }>(db, sql`select relkind::text as kind from pg_class where relname = 'events'`)).kind, 'p', 'after: a partitioned table')
  t.same(await fingerprint(db), old, 'the same rows: count, sum of ids, content of every row')
  t.equal((await one<{ n: string }>(db, sql`select count(*)::text as n from (select distinct project_seq, uuid from events) u`)).n, old.n, 'every uuid once')
  const parts = rowsOf<{ name: string }>(await db.execute(sql`
    select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid where i.inhparent = 'events'::regclass order by 1`)).map((r) => r.name)
  t.equal(parts.length, months.n, 'one partition per month of the rows')
  t.equal(parts[0], `events_y${months.first.replace('-', 'm')}`)
  t.equal(parts.at(-1), `events_y${months.last.replace('-', 'm')}`)
  t.equal((await one<{ n: number }>(db, sql`select count(*)::int as n from pg_class where relname = 'events_unpartitioned'`)).n, 0, 'the old table is gone')
  t.same(await one(db, sql`select sum(hashtext(project_id || day::text || event || events::text || unique_users::text))::text as h from daily_event_counts`), rollups, 'rollups untouched')
  const indexes = rowsOf<{ def: string }>(await db.execute(sql`select indexdef as def from pg_indexes where tablename = 'events' order by indexname`)).map((r) => r.def.replace(/public\./g, ''))
  t.same(indexes, [
    'CREATE INDEX events_day_stream_idx ON ONLY events USING btree (project_seq, day, distinct_id, occurred_at DESC, id DESC)',
    'CREATE UNIQUE INDEX events_id_day_pk ON ONLY events USING btree (id, day)',
    'CREATE UNIQUE INDEX events_uuid_key ON ONLY events USING btree (project_seq, uuid, day)',
  ])

  // The sequence kept its place and its owner: a new row continues after the last id.
  const next = await one<{ id: string }>(db, sql`
    insert into events (project_id, project_seq, uuid, event, distinct_id, occurred_at, day)
    select 'prj_mig_a', seq, gen_random_uuid(), 'signup', 'new', now(), current_date from projects where id = 'prj_mig_a' returning id::text`)
  t.ok(BigInt(next.id) > BigInt(old.max_id), 'new ids continue after the old ones')
  t.equal((await one<{ owner: string }>(db, sql`
    select t.relname as owner from pg_depend d join pg_class t on t.oid = d.refobjid
    where d.objid = 'events_id_seq'::regclass and d.deptype = 'a'`)).owner, 'events', 'the sequence belongs to the new table')

  // The deletion trigger of 0010/0018 reaches the partitioned table.
  await db.execute(sql`delete from projects where id = 'prj_mig_b'`)
  t.equal((await one<{ n: number }>(db, sql`select count(*)::int as n from events where project_id = 'prj_mig_b'`)).n, 0, "a deleted project's events go")
  t.ok((await one<{ n: number }>(db, sql`select count(*)::int as n from events where project_id = 'prj_mig_a'`)).n > 0, 'the other project keeps its events')
})
