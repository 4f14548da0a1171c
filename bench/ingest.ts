// npm run bench:ingest [-- --events 200000] [--clients 4] [--rounds 1] [--quick] …
//
// Issues 14 and 31: ingestion against the floor of an idempotent insert and a raw COPY of the
// same rows, in one run on the local PostgreSQL.
//  1. a fresh database (dropped first), migrated and bootstrapped in this process; the app then
//     started exactly as `npm start` starts it (bench/server-process.ts: package.json's start
//     script read at run time, start.js, default logging to a file) in a process of its own on a
//     loopback port; the load client in a child process;
//  2. per round and per batch size: the same new events written (a) by COPY (postgres.js
//     `copy … from stdin`, on a socket with Nagle's algorithm off: bench/copy-stall.ts) into a
//     scratch table shaped like events (`like events including all`: its columns, defaults and
//     every index), (b) by INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING from this process
//     into that table (the floor: no HTTP, JSON or rollups), and (c) through POST /v1/events by
//     concurrent clients; event and rollup tables are emptied and a checkpoint taken before each
//     measurement, so every run starts fresh;
//  3. events/s, the ratios to the floor and to COPY, and CPU per 1000 events of the writer's
//     process (this one for COPY and the floor, the app's for POST: /proc/<pid>/stat) and of the
//     database's backends (/proc/<pid>/stat of the pids pg_stat_activity lists for it); the
//     rollups' PostgreSQL CPU per 1000 events = POST's minus the floor's at the same batch size;
//  4. the counters checked against a count of the raw events; 5. PASS or FAIL of the target
//     (POST at batches of 1000 ≥ 60 % of the floor's events/s), the load average; 6. the
//     database dropped. The exit code is 1 when the target is missed.
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { randomUUID } from 'node:crypto'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres, { type Sql } from 'postgres'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import type { IngestResult } from './client.ts'
import { Client, freePort, loadAverage, median, numericOption } from './client-process.ts'
import { npmStart, startServer, type ServerProcess } from './server-process.ts'
import { checkDatabaseName, copyField, databaseUrl, dropDatabases, noDelay, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const USAGE = `Usage: npm run bench:ingest -- [options]

  --events <n>     new events per measurement (default 200000)
  --clients <n>    concurrent HTTP clients, and connections of the INSERT writer (default 4)
  --batches <list> batch sizes, comma-separated (default 1000,100)
  --users <n>      distinct users the events are spread over, skewed (default 200000)
  --rounds <n>     repeat every measurement; medians are reported (default 1)
  --cpu-prof <dir> the app runs under Node's --cpu-prof and writes its .cpuprofile into <dir> (the
                   profiler costs CPU: its figures are no verdict)
  --quick          a check of the bench itself (< 2 minutes): 20000 events, batches of 1000 only
  --db-name <name> database name (default growthdesk_bench_ingest); server from BENCH_DATABASE_URL
                   (default postgres://postgres@127.0.0.1:5432/postgres)
  --keep           keep the bench database afterwards
`

const { values: args } = parseArgs({
  options: {
    events: { type: 'string' },
    clients: { type: 'string', default: '4' },
    batches: { type: 'string' },
    users: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '1' },
    'db-name': { type: 'string', default: 'growthdesk_bench_ingest' },
    'cpu-prof': { type: 'string' },
    keep: { type: 'boolean', default: false },
    quick: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
})
if (args.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const num = numericOption(USAGE, { integer: true })
const eventCount = num('events', args.events ?? (args.quick ? '20000' : '200000'), 1000, 10_000_000)
const clients = num('clients', args.clients, 1, 64)
const users = num('users', args.users, 1, 10_000_000)
const rounds = num('rounds', args.rounds, 1, 20)
const batchSizes = (args.batches ?? (args.quick ? '1000' : '1000,100')).split(',').map((b) => num('batches', b, 1, 1000))
const dbName = checkDatabaseName(args['db-name']!)

const benchUrl = databaseUrl(dbName)
const log = (line = '') => process.stdout.write(`${line}\n`)
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US')
const SCRATCH = 'bench_copy_scratch'
const EVENT_TABLES = ['events', 'daily_event_users', 'daily_event_counts', 'user_activity', 'project_event_stats']
const COLUMNS = 'project_id, project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at'

// ---------------------------------------------------------------------------------------------
// CPU of this process and of every backend of the bench database but the monitor's own.

let ticks: number | undefined
function processCpuMs(pid: number): number {
  ticks ??= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks
  } catch {
    return 0 // gone (or not on this machine): counted as nothing
  }
}
interface Cpu { bench: number; app: number; backends: Map<number, number> }
async function snapshot(monitor: Sql): Promise<Cpu> {
  const u = process.cpuUsage()
  const rows = await monitor<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${dbName} and pid <> pg_backend_pid()`
  return { bench: (u.user + u.system) / 1000, app: app ? processCpuMs(app.pid) : 0, backends: new Map(rows.map((r) => [r.pid, processCpuMs(r.pid)])) }
}
/** CPU ms used between two snapshots: this process's (the COPY and INSERT writers), the app's, PostgreSQL's. */
function used(a: Cpu, b: Cpu) {
  let db = 0
  for (const [pid, ms] of b.backends) db += ms - (a.backends.get(pid) ?? 0)
  return { benchMs: b.bench - a.bench, appMs: b.app - a.app, databaseMs: db }
}

// ---------------------------------------------------------------------------------------------
// The events: the client's distribution (bench/client.ts), made once so COPY and HTTP get the same rows.

interface Ev { uuid: string; event: string; distinct_id: string; timestamp: string; properties?: Record<string, unknown> }
function makeEvents(n: number): Ev[] {
  const now = Date.now()
  const out: Ev[] = []
  for (let i = 0; i < n; i++) {
    const r = Math.random()
    let kind: Pick<Ev, 'event' | 'properties'> = { event: 'daily_use' }
    if (r >= 0.99) kind = { event: 'purchase', properties: { amount_cents: 500 + Math.floor(Math.random() * 50) * 100, currency: 'USD' } }
    else if (r >= 0.965) kind = { event: 'invite_sent' }
    else if (r >= 0.9) kind = { event: 'page_view', properties: { path: `/docs/${Math.floor(Math.random() * 40)}` } }
    out.push({ uuid: randomUUID(), distinct_id: `user_${Math.floor(users * Math.random() ** 2)}`, timestamp: new Date(now - Math.floor(Math.random() * 48 * 3600_000)).toISOString(), ...kind })
  }
  return out
}

async function copyRows(sql: Sql, projectId: string, seq: number, rows: Ev[]): Promise<number> {
  const received = new Date().toISOString()
  const started = performance.now()
  const stream = await sql.unsafe(`copy ${SCRATCH} (${COLUMNS}) from stdin`).writable()
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve)
    stream.on('error', reject)
  })
  for (let i = 0; i < rows.length; i += 1000) {
    let chunk = ''
    for (const e of rows.slice(i, i + 1000)) {
      // The project is in UTC: the local day is the UTC date.
      chunk += `${projectId}\t${seq}\t${e.uuid}\t${copyField(e.event)}\t${copyField(e.distinct_id)}\t${e.timestamp}\t${e.timestamp.slice(0, 10)}\t${copyField(JSON.stringify(e.properties ?? {}))}\t${received}\n`
    }
    if (!stream.write(chunk)) await new Promise((resolve) => stream.once('drain', resolve))
  }
  stream.end()
  await done
  return performance.now() - started
}

/**
 * The floor of any ingestion that keeps "idempotent by uuid": the same rows by `INSERT … ON
 * CONFLICT DO NOTHING` straight from this process, `clients` connections, `batch` rows a
 * statement (arrays through `unnest`), into the scratch table: no HTTP, no JSON, no validation,
 * no rollups. What POST /v1/events could reach at best, beside what COPY reaches.
 */
async function insertRows(pool: Sql, projectId: string, seq: number, rows: Ev[], batch: number): Promise<number> {
  const received = new Date().toISOString()
  const started = performance.now()
  let next = 0
  const writer = async () => {
    for (let i = next; i < rows.length; i = next) {
      next += batch
      const part = rows.slice(i, i + batch)
      await pool.unsafe(
        `insert into ${SCRATCH} (${COLUMNS})
         select $1, $2, u, e, d, o, day, p, $3 from unnest($4::uuid[], $5::text[], $6::text[], $7::timestamptz[], $8::date[], $9::jsonb[]) as t (u, e, d, o, day, p)
         on conflict (project_seq, uuid, day) do nothing`,
        // The day as COPY writes it: the UTC date (the project is in UTC).
        [projectId, seq, received, part.map((e) => e.uuid), part.map((e) => e.event), part.map((e) => e.distinct_id), part.map((e) => e.timestamp),
          part.map((e) => e.timestamp.slice(0, 10)), part.map((e) => JSON.stringify(e.properties ?? {}))]
      )
    }
  }
  await Promise.all(Array.from({ length: clients }, writer))
  return performance.now() - started
}

// ---------------------------------------------------------------------------------------------

let app: ServerProcess | undefined
let client: Client | undefined
let sql: Sql | undefined
let tmpDir: string | undefined

const cleanup = registerCleanup(async () => {
  client?.close()
  await sql?.end({ timeout: 5 }).catch(() => {})
  await app?.stop().catch(() => {})
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true })
  if (!args.keep) await dropDatabases([dbName])
})

interface Row { label: string; batch: number; perSecond: number[]; serverMs: number[]; databaseMs: number[]; ratio: number[]; ofFloor: number[] }

async function main() {
  log(`growthdesk bench:ingest — PostgreSQL ${await serverVersion()}, ${os.cpus().length} CPUs, Node ${process.version}, commit ${gitHead()}`)
  await recreateDatabase(dbName)
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gd-bench-ingest-'))
  // Migrations and the workspace in this process, which then lets go; the app's process finds
  // them (no first-start bootstrap). DATA_DIR: where the secrets key is kept, shared.
  const env = { DATABASE_URL: benchUrl, DATA_DIR: path.join(tmpDir, 'data'), HOST: '127.0.0.1' }
  const port = await freePort()
  const local = await buildApp({ config: loadConfig({ ...env, PORT: String(port), LOG_LEVEL: 'silent' }), logger: false })
  const boot = await bootstrap(local, { workspace: 'growthdesk bench', email: 'bench@growthdesk.bench', project: 'Bench project' }).finally(() => local.close())
  // The app as npm start runs it; the rate limits (configuration) off, or the flood is refused by design.
  app = await startServer({ port, logFile: path.join(tmpDir, 'app.log'), cpuProf: args['cpu-prof'], env: { ...env, RATE_LIMIT_MAX: '0', RATE_LIMIT_INGEST_MAX: '0', RATE_LIMIT_CONCURRENCY: '0' } })
  log(`app: \`${npmStart().command}\` (pid ${app.pid}, default logging to a file)`)
  sql = postgres(benchUrl, { max: 1, ...quiet, connection: { application_name: 'growthdesk-bench-monitor' } })
  const projectId = boot.project.id
  const [{ seq }] = (await sql`select seq from projects where id = ${projectId}`) as unknown as [{ seq: number }]
  // The scratch table shaped like events: its columns, defaults, constraints and every index
  // (what storing an event costs PostgreSQL whatever the rollups; no foreign keys: LIKE copies none).
  await sql.unsafe(`create table ${SCRATCH} (like events including all)`)
  // COPY on a socket with Nagle's algorithm off, or each COPY waits for a delayed ACK (bench/copy-stall.ts).
  const copySql = postgres(benchUrl, { max: 1, ...quiet, ...noDelay(benchUrl), connection: { application_name: 'growthdesk-bench-copy' } })
  await copySql`select 1`
  // The floor as a plain client sends it: postgres.js as the app uses it.
  const insertSql = postgres(benchUrl, { max: clients, ...quiet, connection: { application_name: 'growthdesk-bench-insert' } })

  const origin = app.origin
  client = new Client()

  const fresh = async () => {
    await sql!.unsafe(`truncate ${SCRATCH}, ${EVENT_TABLES.join(', ')}`)
    await sql!.unsafe('checkpoint')
  }
  const warmup = async (batch: number) => {
    // Plans, caches and connections first (not counted), then emptied again.
    const file = path.join(tmpDir!, 'warmup.jsonl')
    const evs = makeEvents(Math.max(20 * batch, 5000))
    const bodies: string[] = []
    for (let i = 0; i < evs.length; i += batch) bodies.push(JSON.stringify({ events: evs.slice(i, i + batch) }))
    fs.writeFileSync(file, bodies.join('\n'))
    await client!.run<IngestResult>({ kind: 'ingest', url: `${origin}/v1/events`, key: boot.keys.ingest, clients, batchSize: batch, users, spreadHours: 48, seconds: 600, maxBatches: bodies.length, bodiesFile: file })
    await copyRows(copySql, projectId, seq, evs.slice(0, 5000))
    await sql!.unsafe(`truncate ${SCRATCH}`)
    await insertRows(insertSql, projectId, seq, evs.slice(0, 5000), batch)
  }

  log(`${fmtInt(eventCount)} new events per measurement, ${fmtInt(users)} users, ${clients} HTTP clients; ${rounds} round(s); project in UTC`)
  log(`load average before: ${loadAverage()}`)
  const results = new Map<string, Row>()
  const row = (label: string, batch: number) => {
    const key = `${label}/${batch}`
    if (!results.has(key)) results.set(key, { label, batch, perSecond: [], serverMs: [], databaseMs: [], ratio: [], ofFloor: [] })
    return results.get(key)!
  }
  for (let round = 1; round <= rounds; round++) {
    for (const batch of batchSizes) {
      await fresh()
      await warmup(batch)
      const evs = makeEvents(eventCount)

      await fresh()
      let before = await snapshot(sql)
      const copyMs = await copyRows(copySql, projectId, seq, evs)
      let cpu = used(before, await snapshot(sql))
      const copyRate = eventCount / (copyMs / 1000)
      const c = row('COPY', batch)
      c.perSecond.push(copyRate)
      c.serverMs.push(cpu.benchMs / (eventCount / 1000))
      c.databaseMs.push(cpu.databaseMs / (eventCount / 1000))
      c.ratio.push(1)

      await fresh()
      before = await snapshot(sql)
      const insertMs = await insertRows(insertSql, projectId, seq, evs, batch)
      cpu = used(before, await snapshot(sql))
      const [{ n: inserted }] = (await sql`select count(*)::int as n from ${sql(SCRATCH)}`) as unknown as [{ n: number }]
      if (inserted !== eventCount) throw new Error(`INSERT … ON CONFLICT wrote ${inserted} of ${eventCount} rows`)
      const insertRate = eventCount / (insertMs / 1000)
      const f = row('INSERT … ON CONFLICT', batch)
      f.perSecond.push(insertRate)
      f.serverMs.push(cpu.benchMs / (eventCount / 1000))
      f.databaseMs.push(cpu.databaseMs / (eventCount / 1000))
      f.ratio.push(insertRate / copyRate)
      f.ofFloor.push(1)

      const file = path.join(tmpDir, 'bodies.jsonl')
      const bodies: string[] = []
      for (let i = 0; i < evs.length; i += batch) bodies.push(JSON.stringify({ events: evs.slice(i, i + batch) }))
      fs.writeFileSync(file, bodies.join('\n'))
      await fresh()
      before = await snapshot(sql)
      const r = await client.run<IngestResult>({ kind: 'ingest', url: `${origin}/v1/events`, key: boot.keys.ingest, clients, batchSize: batch, users, spreadHours: 48, seconds: 3600, maxBatches: bodies.length, bodiesFile: file })
      cpu = used(before, await snapshot(sql))
      if (r.failures.length) throw new Error(`${r.failures.length} failed requests; first: ${r.failures[0]}`)
      if (r.accepted !== eventCount) throw new Error(`accepted ${r.accepted} of ${eventCount} events`)
      await checkCounters(sql, projectId, eventCount)
      const rate = r.accepted / (r.elapsedMs / 1000)
      const h = row('POST /v1/events', batch)
      h.perSecond.push(rate)
      h.serverMs.push(cpu.appMs / (eventCount / 1000))
      h.databaseMs.push(cpu.databaseMs / (eventCount / 1000))
      h.ratio.push(rate / copyRate)
      h.ofFloor.push(rate / insertRate)
      log(`  round ${round}, batch ${batch}: COPY ${fmtInt(copyRate)}/s, INSERT … ON CONFLICT ${fmtInt(insertRate)}/s = ${((100 * insertRate) / copyRate).toFixed(1)} % of COPY, ` +
        `HTTP ${fmtInt(rate)}/s = ${((100 * rate) / insertRate).toFixed(1)} % of the floor; load ${loadAverage()}`)
    }
  }
  await copySql.end()
  await insertSql.end()

  log()
  log(`Results (median of ${rounds} round(s)), CPU per 1000 events (writer: this process for COPY and INSERT, the app's for POST):`)
  log('| writer | batch | events/s | of the floor | of COPY | writer CPU | PostgreSQL CPU |')
  log('| --- | --- | --- | --- | --- | --- | --- |')
  const pct = (list: number[]) => (list.length ? `${(100 * median(list)).toFixed(1)} %` : '—')
  for (const r of results.values()) {
    log(`| ${r.label} | ${r.batch} | ${fmtInt(median(r.perSecond))} | ${pct(r.ofFloor)} | ${pct(r.ratio)} | ${median(r.serverMs).toFixed(1)} ms | ${median(r.databaseMs).toFixed(1)} ms |`)
  }
  for (const batch of batchSizes) {
    const post = results.get(`POST /v1/events/${batch}`)
    const floor = results.get(`INSERT … ON CONFLICT/${batch}`)
    if (post && floor) {
      const each = post.databaseMs.map((ms, i) => ms - floor.databaseMs[i]!)
      log(`rollups (and the batch's JSON, key and project checks) at batches of ${batch}: ${median(each).toFixed(1)} ms of PostgreSQL CPU per 1000 events ` +
        `(POST's ${median(post.databaseMs).toFixed(1)} ms minus the floor's ${median(floor.databaseMs).toFixed(1)} ms; target: half of today's)`)
    }
  }
  const target = results.get('POST /v1/events/1000')
  if (target) {
    const value = median(target.ofFloor)
    const pass = value >= 0.6
    if (!pass) process.exitCode = 1
    log(`target: POST /v1/events at batches of 1000 ≥ 60 % of the floor's events/s: ${(100 * value).toFixed(1)} %   ${pass ? 'PASS' : 'FAIL'}` +
      `${target.ofFloor.length > 1 ? `   (rounds: ${target.ofFloor.map((v) => `${(100 * v).toFixed(1)} %`).join(', ')})` : ''}; load average ${loadAverage()}`)
  } else {
    log(`load average after: ${loadAverage()}`)
  }
}

/** The rollups agree with a count of the raw events (all of one day range, one project). */
async function checkCounters(sql: Sql, projectId: string, expected: number) {
  const [r] = await sql<{ raw: number; stats: number; counts: number; uniques_ok: boolean; active_ok: boolean }[]>`
    select (select count(*) from events where project_id = ${projectId})::int as raw,
           (select sum(events) from project_event_stats where project_id = ${projectId})::int as stats,
           (select sum(events) from daily_event_counts where project_id = ${projectId})::int as counts,
           (select coalesce(bool_and(c.n = e.n), true) from
              (select day, event, sum(unique_users) as n from daily_event_counts where project_id = ${projectId} group by 1, 2) c
              full join (select day, event, count(distinct distinct_id) as n from events where project_id = ${projectId} group by 1, 2) e using (day, event)) as uniques_ok,
           ((select count(*) from user_activity where project_id = ${projectId}) =
            (select count(distinct distinct_id) from events where project_id = ${projectId} and event = 'daily_use')) as active_ok`
  if (r!.raw !== expected || r!.stats !== expected || r!.counts !== expected || !r!.uniques_ok || !r!.active_ok) {
    throw new Error(`rollups disagree with the raw events: ${JSON.stringify(r)}`)
  }
}

function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  } catch {
    return 'unknown'
  }
}

main().then(cleanup, async (err: unknown) => {
  reportFailure('bench:ingest', err)
  await cleanup()
  process.exit(1)
})
