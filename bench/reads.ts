// node bench/reads.ts [-- --calls 1000] [--rounds 3] [--db-name growthdesk_bench_reads]
//
// The metrics reads and the project card, in process, on the local PostgreSQL (issue 31, items 2
// and 4): server CPU (this process) and PostgreSQL CPU (the app's backends, from /proc) per call,
// each as a ratio to a yardstick measured in the same round: one primary-key lookup of the
// project (postgres.js, a named statement) behind a plain Fastify route, called the same way
// (`inject`). Calls go through the tools REST API (`POST /v1/tools/<name>`, a service key).
//
// Counter shards (item 2): two projects hold the same 60 days of rollups (10 event names a day),
// one as unsharded ingestion leaves them ("flat": one row per day and event), the other as 16
// concurrent connections do ("sharded": 16 rows per day and event, 32 a day in
// user_activity_days, 16 in project_event_stats). Phase 1 reads both; then fold_counter_shards
// runs (as the timer would) and phase 2 reads both again: the sharded project now has one row
// per finished day, and today still has its 16 shards (a fold leaves today to ingestion). Each
// read of the sharded project is reported as a ratio to the same read of the flat one, per round,
// and the median over rounds is printed. The database is dropped at the end.
import { parseArgs } from 'node:util'
import os from 'node:os'
import postgres from 'postgres'
import Fastify from 'fastify'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { addDays } from '../core/time.ts'
import { cpuSnapshot, cpuUsed } from './cpu.ts'
import { loadAverage, median, numericOption } from './client-process.ts'
import { checkDatabaseName, connectToServer, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const USAGE = `Usage: node bench/reads.ts [options]

  --calls <n>     calls per read per round (default 1000)
  --rounds <n>    rounds, each reading every scenario once, alternating (default 3)
  --db-name <s>   the bench database (default growthdesk_bench_reads), dropped at the end
`
const { values: opts } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, 'db-name': { type: 'string' }, help: { type: 'boolean' } } })
if (opts.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const num = numericOption(USAGE, { integer: true })
const CALLS = num('calls', opts.calls ?? '1000', 10, 1_000_000)
const ROUNDS = num('rounds', opts.rounds ?? '3', 1, 100)
const dbName = checkDatabaseName(opts['db-name'] ?? 'growthdesk_bench_reads')
const log = (line: string) => process.stdout.write(`${line}\n`)

const DAYS = 60
/** Today in UTC, the projects' time zone (the app's clock). */
const today = new Date().toISOString().slice(0, 10)
const SHARDS = 16
const EVENTS = ['signup', 'daily_use', 'page_view', 'search', 'share', 'invite', 'export', 'upgrade', 'comment', 'logout']

let app: FastifyInstance | undefined
let ref: FastifyInstance | undefined
let refSql: postgres.Sql | undefined
let monitor: postgres.Sql | undefined
let probe: postgres.Sql | undefined
const cleanup = registerCleanup(async () => {
  await app?.close().catch(() => {})
  await ref?.close().catch(() => {})
  await refSql?.end().catch(() => {})
  await monitor?.end().catch(() => {})
  await probe?.end().catch(() => {})
  await dropDatabases([dbName])
})

/**
 * 60 days of rollups for a project, as ingestion on `shards` connections leaves them: per day
 * and event `events` = 100 + day, `unique_users` = 40 + day, split over the shards (the split of
 * user_activity_days over 2 × shards rows includes negative rows, as moves leave them).
 */
async function seedRollups(sql: postgres.Sql, projectId: string, shards: number) {
  await sql`
    insert into daily_event_counts (project_id, day, event, shard, events, unique_users)
    select ${projectId}, ${today}::date - d, e, s,
           (100 + d) / ${shards} + case when s = 0 then (100 + d) % ${shards} else 0 end,
           (40 + d) / ${shards} + case when s = 0 then (40 + d) % ${shards} else 0 end
    from generate_series(0, ${DAYS - 1}) d, unnest(${EVENTS}::text[]) e, generate_series(0, ${shards - 1}) s`
  const dayShards = shards === 1 ? 1 : shards * 2
  await sql`
    insert into user_activity_days (project_id, day, shard, users)
    select ${projectId}, ${today}::date - d, s,
           case when ${dayShards} = 1 then 30 + d when s = 0 then 31 + d when s < ${Math.ceil(dayShards / 2)} then 1 else -1 end
    from generate_series(0, ${DAYS - 1}) d, generate_series(0, ${dayShards - 1}) s`
  await sql`
    insert into project_event_stats (project_id, shard, last_event_at, events)
    select ${projectId}, s, now() - make_interval(secs => s), 1000 from generate_series(0, ${shards - 1}) s`
}

async function main() {
  await recreateDatabase(dbName)
  const url = databaseUrl(dbName)
  app = await buildApp({
    config: { ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', RATE_LIMIT_CONCURRENCY: '0', WEBHOOKS_ENABLED: 'false', DIGESTS_ENABLED: 'false', RETENTION_FOLD_INTERVAL_MS: '0', COUNTER_FOLD_INTERVAL_MS: '0' }), database: { kind: 'postgres', url } },
    logger: false,
  })
  await app.ready()
  const boot = await bootstrap(app, { workspace: 'growthdesk bench reads', email: 'bench-reads@growthdesk.bench', project: 'Flat' })
  const sharded = await app.repos.projects.create({ workspaceId: boot.workspace.id, ownerId: boot.user.id, slug: 'sharded', name: 'Sharded' })
  if (!sharded.ok) throw new Error('could not create the sharded project')
  const projects = { flat: boot.project.id, sharded: sharded.project.id }

  // The yardstick: a primary-key lookup, named by the app's name so that its backends are counted.
  refSql = postgres(url, { max: 10, ...quiet, connection: { application_name: 'growthdesk' } })
  ref = Fastify()
  ref.post('/ref', async (req) => {
    const [row] = await refSql!`select id, slug, name, timezone from projects where id = ${(req.body as { project: string }).project}`
    return row
  })
  await ref.ready()

  // Not named like the app: its backend is not counted.
  probe = postgres(url, { max: 1, ...quiet })
  await seedRollups(probe, projects.flat, 1)
  await seedRollups(probe, projects.sharded, SHARDS)
  await probe`vacuum analyze daily_event_counts, user_activity_days, project_event_stats`

  monitor = connectToServer()
  const headers = { authorization: `Bearer ${boot.keys.service}`, 'content-type': 'application/json' }
  const call = async (name: string, args: object) => {
    const res = await app!.inject({ method: 'POST', url: `/v1/tools/${name}`, headers, payload: JSON.stringify(args) })
    if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 300)}`)
    return res.body
  }
  const refCall = async (project: string) => {
    const res = await ref!.inject({ method: 'POST', url: '/ref', payload: { project } })
    if (res.statusCode !== 200) throw new Error(`ref: ${res.statusCode}`)
  }
  type Scenario = { key: string; run: () => Promise<unknown> }
  const reads = (which: 'flat' | 'sharded'): Scenario[] => [
    { key: `daily_ops 7d ${which}`, run: () => call('get_daily_ops', { project: projects[which] }) },
    { key: `daily_ops 30d ${which}`, run: () => call('get_daily_ops', { project: projects[which], window: '30d' }) },
    // History only: the 7 days before today (what the fold makes flat; today is ingestion's).
    { key: `daily_ops to yesterday ${which}`, run: () => call('get_daily_ops', { project: projects[which], from: addDays(today, -7), to: addDays(today, -1) }) },
    { key: `summary 7d ${which}`, run: () => call('get_daily_event_summary', { project: projects[which] }) },
    { key: `overview ${which}`, run: () => call('get_overview', { project: projects[which] }) },
  ]
  const scenarios: Scenario[] = [
    { key: 'ref (pk lookup)', run: () => refCall(projects.flat) },
    { key: 'get_project', run: () => call('get_project', { project: projects.flat }) },
    ...reads('flat'),
    ...reads('sharded'),
  ]

  /** CPU per call (µs) of one scenario: `CALLS` calls one after another, after a few unmeasured ones. */
  async function measure(s: Scenario) {
    for (let i = 0; i < 50; i++) await s.run()
    const before = await cpuSnapshot(monitor!, dbName)
    for (let i = 0; i < CALLS; i++) await s.run()
    const used = cpuUsed(before, await cpuSnapshot(monitor!, dbName))
    return { server: (used.serverMs * 1000) / CALLS, db: used.databaseMs === undefined ? NaN : (used.databaseMs * 1000) / CALLS }
  }

  async function phase(label: string) {
    const perRound: Record<string, { server: number; db: number }[]> = {}
    for (let round = 0; round < ROUNDS; round++) {
      for (const s of round % 2 ? [...scenarios].reverse() : scenarios) (perRound[s.key] ??= []).push(await measure(s))
    }
    const ratio = (a: string, b: string, k: 'server' | 'db') => median(perRound[a]!.map((x, i) => x[k] / perRound[b]![i]![k]))
    log(`\n${label} (load average ${loadAverage()})`)
    log('| read | server µs/call | PostgreSQL µs/call | server × ref | PostgreSQL × ref | server × flat | PostgreSQL × flat |')
    log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |')
    for (const s of scenarios) {
      const m = { server: median(perRound[s.key]!.map((x) => x.server)), db: median(perRound[s.key]!.map((x) => x.db)) }
      const flat = s.key.endsWith(' sharded') ? s.key.replace(/ sharded$/, ' flat') : undefined
      log(`| ${s.key} | ${m.server.toFixed(0)} | ${m.db.toFixed(0)} | ${ratio(s.key, 'ref (pk lookup)', 'server').toFixed(2)} | ${ratio(s.key, 'ref (pk lookup)', 'db').toFixed(2)} | ` +
        `${flat ? ratio(s.key, flat, 'server').toFixed(2) : ''} | ${flat ? ratio(s.key, flat, 'db').toFixed(2) : ''} |`)
    }
  }

  // The same answers from both projects' rollups (they sum to the same figures).
  for (const [a, b] of [['get_daily_ops', { window: '30d' }], ['get_daily_event_summary', {}], ['get_overview', {}]] as const) {
    const strip = (body: string) => JSON.stringify({ ...JSON.parse(body).result, project: undefined, generated_at: undefined, last_event_at: undefined })
    if (strip(await call(a, { ...b, project: projects.flat })) !== strip(await call(a, { ...b, project: projects.sharded }))) throw new Error(`${a}: the two projects answer differently`)
  }
  const rows = async () => (await probe!<{ n: string }[]>`select count(*)::text as n from daily_event_counts where project_id = ${projects.sharded} and day > ${today}::date - 7`)[0]!.n
  log(`growthdesk bench reads — PostgreSQL ${await serverVersion()}, ${os.cpus().length} CPUs, Node ${process.version}, ${CALLS} calls × ${ROUNDS} rounds per read`)
  log(`checked: both projects answer daily_ops, the event summary and the overview alike; the sharded project's last 7 days are ${await rows()} rows of daily_event_counts (flat: ${7 * EVENTS.length})`)
  await phase('Phase 1: 16-shard history, unfolded')
  const t0 = process.hrtime.bigint()
  const folded = await app.repos.events.foldShards(new Date())
  log(`\nfold_counter_shards: ${folded} rows written in ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(0)} ms; the sharded project's last 7 days are now ${await rows()} rows (today keeps its ${SHARDS} shards)`)
  await phase('Phase 2: the same history, folded (today still 16 shards)')
}

main()
  .catch((err) => {
    reportFailure('bench reads', err)
    process.exitCode = 1
  })
  .finally(() => cleanup())
