// npm run bench:metrics [-- --scale 0.01] [--keep] [--reuse] …
//
// The performance section of issue 3, end to end on the local PostgreSQL:
//  1. a fresh database (dropped first), the app built on it (migrations), a bootstrapped workspace;
//  2. 10 M events of 200 k users over the 90 days ending today plus 1 M opportunities, generated
//     on the server (bench/load.ts), rollups built from the raw events, then VACUUM ANALYZE;
//  3. p50/p95 of daily-ops, daily-event-summary and a filtered listing over HTTP, sequentially
//     (and with autocannon at 10 connections), from a separate client process;
//  4. ingestion throughput through POST /v1/events (batches of 1000, several clients);
//  5. the naive raw-events query a peer uses, timed directly, against daily-ops;
//  6. a table of results against the targets; 7. the database dropped unless --keep.
// Nothing is written to the repository; the exit code is 1 when a target is missed.
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import postgres, { type Sql } from 'postgres'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap, createKey } from '../core/admin.ts'
import { localDate } from '../core/time.ts'
import { cpuSnapshot, cpuUsed, type CpuUsed } from './cpu.ts'
import type { IngestResult, LatencyResult } from './client.ts'
import { Client } from './client-process.ts'
import {
  buildRollup, createIndexes, dropSecondaryIndexes, indexDefinitions, loadEvents, loadOpportunities,
  opportunityCountMismatches, rollupSteps, verifyRollupsByIngestion, type Dataset,
} from './load.ts'

const USAGE = `Usage: npm run bench:metrics -- [options]

  --scale <f>          size factor (env BENCH_SCALE; default 1 = 10 M events, 200 k users, 1 M opportunities)
  --keep               keep the bench database afterwards
  --reuse              reuse a kept bench database (no drop, no load; new keys); data must be from today
  --db-name <name>     database name (default growthdesk_bench); server from BENCH_DATABASE_URL
                       (default postgres://postgres@127.0.0.1:5432/postgres)
  --timezone <tz>      project time zone (default UTC)
  --jobs <n>           connections used for the bulk load (default 2)
  --requests <n>       sequential requests per endpoint after the warm-up (default 200)
  --warmup <n>         warm-up requests per endpoint (default 20)
  --cannon <s>         autocannon seconds per endpoint at 10 connections, 0 = skip (default 5)
  --ingest-seconds <s> ingestion run length (default 10)
  --ingest-warmup <s>  ingestion before the timed run, not counted (default 3; 0 = none)
  --ingest-clients <n> concurrent ingestion clients (default 4)
  --naive-runs <n>     timed runs of the naive query after one warm-up run (default 5)
  --verify / --no-verify
                       re-ingest every bulk event through the service's ingest SQL into a twin
                       project and compare the rollups (default: on when ≤ 200 000 events)
`

const { values: args } = parseArgs({
  options: {
    scale: { type: 'string' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    'db-name': { type: 'string', default: 'growthdesk_bench' },
    timezone: { type: 'string', default: 'UTC' },
    jobs: { type: 'string', default: '2' },
    requests: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    cannon: { type: 'string', default: '5' },
    'ingest-seconds': { type: 'string', default: '10' },
    'ingest-warmup': { type: 'string', default: '3' },
    'ingest-clients': { type: 'string', default: '4' },
    'naive-runs': { type: 'string', default: '5' },
    verify: { type: 'boolean' },
    'no-verify': { type: 'boolean' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
})

if (args.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}

function num(name: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value)
  if (!Number.isFinite(n) || n < min || n > max) {
    process.stderr.write(`--${name} must be a number from ${min} to ${max} (got ${JSON.stringify(value)}).\n\n${USAGE}`)
    process.exit(2)
  }
  return n
}

const scale = num('scale', args.scale ?? process.env.BENCH_SCALE ?? '1', 0.0001, 10)
const dbName = args['db-name']!
if (!/^[a-z_][a-z0-9_]{0,62}$/.test(dbName)) {
  process.stderr.write(`--db-name must be a lower-case SQL identifier (got ${JSON.stringify(dbName)}).\n`)
  process.exit(2)
}
const jobs = num('jobs', args.jobs, 1, 16)
const requests = num('requests', args.requests, 1, 100_000)
const warmup = num('warmup', args.warmup, 0, 100_000)
const cannonSeconds = num('cannon', args.cannon, 0, 600)
const ingestSeconds = num('ingest-seconds', args['ingest-seconds'], 1, 600)
const ingestWarmup = num('ingest-warmup', args['ingest-warmup'], 0, 600)
const ingestClients = num('ingest-clients', args['ingest-clients'], 1, 64)
const naiveRuns = num('naive-runs', args['naive-runs'], 1, 100)

const SIZE = { events: 10_000_000, users: 200_000, opportunities: 1_000_000, days: 90 }
const size = {
  events: Math.round(SIZE.events * scale),
  users: Math.max(1, Math.round(SIZE.users * scale)),
  opportunities: Math.round(SIZE.opportunities * scale),
  days: SIZE.days,
}
if (size.events < size.users) size.events = size.users // every user signs up once
const verify = args['no-verify'] ? false : (args.verify ?? size.events <= 200_000)

const TARGETS = { dailyOpsP50: 20, summaryP50: 50, listingP50: 10, ingestPerSecond: 20_000, naiveRatio: 20 }
const BENCH_EMAIL = 'bench@growthdesk.bench'
const PROJECT_NAME = 'Bench project'
const BATCH = 1000

// ---------------------------------------------------------------------------------------------
// Output helpers

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US')
const fmtMs = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : ms >= 10 ? `${ms.toFixed(1)} ms` : `${ms.toFixed(2)} ms`)
const log = (line = '') => process.stdout.write(`${line}\n`)

function perUnit(cpu: CpuUsed, units: number): CpuUsed {
  return { serverMs: cpu.serverMs / units, databaseMs: cpu.databaseMs === undefined ? undefined : cpu.databaseMs / units }
}
const fmtCpu = (c: CpuUsed) => `server ${fmtMs(c.serverMs)}` + (c.databaseMs === undefined ? ' (PostgreSQL not readable)' : ` + PostgreSQL ${fmtMs(c.databaseMs)}`)

const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ')

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const loadSteps: { step: string; seconds: number }[] = []
async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await fn()
  const seconds = (performance.now() - started) / 1000
  loadSteps.push({ step: label, seconds })
  log(`  ${label.padEnd(52, '.')} ${seconds.toFixed(1).padStart(7)} s`)
  return result
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)))
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padEnd(widths[i]!))).join('  ')
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

// ---------------------------------------------------------------------------------------------
// The client process

// ---------------------------------------------------------------------------------------------

const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
const benchUrl = (() => {
  const u = new URL(baseUrl)
  u.pathname = `/${dbName}`
  return u.toString()
})()
const quiet = { onnotice: () => {} }

let app: FastifyInstance | undefined
let client: Client | undefined
let loadSql: Sql | undefined
let cleaned: Promise<void> | undefined

function cleanup(): Promise<void> {
  return (cleaned ??= (async () => {
    client?.close()
    await loadSql?.end({ timeout: 5 }).catch(() => {})
    await app?.close().catch(() => {})
    if (!args.keep) {
      const admin = postgres(baseUrl, { max: 1, ...quiet })
      try {
        await admin.unsafe(`drop database if exists ${dbName} with (force)`)
        log(`Dropped the database ${dbName}.`)
      } finally {
        await admin.end()
      }
    } else {
      log(`Kept the database ${dbName}: ${benchUrl}`)
    }
  })())
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`\n${signal}: cleaning up…`)
    cleanup().finally(() => process.exit(130))
  })
}

async function main() {
  const admin = postgres(baseUrl, { max: 1, ...quiet })
  let reuse: boolean
  try {
    const [{ version }] = (await admin`select current_setting('server_version') as version`) as unknown as [{ version: string }]
    const exists = (await admin`select 1 from pg_database where datname = ${dbName}`).length > 0
    reuse = args.reuse && exists
    log(`growthdesk bench:metrics — PostgreSQL ${version}, ${os.cpus().length} CPUs, Node ${process.version}`)
    log(`size: ${fmtInt(size.events)} events, ${fmtInt(size.users)} users, ${size.days} days, ${fmtInt(size.opportunities)} opportunities (scale ${scale})`)
    log(`database: ${benchUrl}${reuse ? ' (reused)' : ''}`)
    log()
    log('Load')
    if (!reuse) {
      await step(`drop + create database ${dbName}`, async () => {
        await admin.unsafe(`drop database if exists ${dbName} with (force)`)
        await admin.unsafe(`create database ${dbName}`)
      })
    }
  } finally {
    await admin.end()
  }

  app = await step('build app (migrations)', () =>
    buildApp({
      // The configuration a deployment would read from this environment (defaults for the rest).
      config: { ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_INGEST_MAX: '1000000', RATE_LIMIT_CONCURRENCY: '0' }), database: { kind: 'postgres', url: benchUrl }, logLevel: 'warn' },
      logger: false,
    })
  )

  // Session settings for the bulk work only; the server's configuration is left alone.
  loadSql = postgres(benchUrl, {
    max: jobs,
    ...quiet,
    connection: { application_name: 'growthdesk-bench-load', synchronous_commit: 'off', work_mem: '256MB', maintenance_work_mem: '1GB' },
  })
  const sql = loadSql

  let keys: { mcp: string; ingest: string }
  let dataset: Dataset
  const now = new Date()
  if (!reuse) {
    const boot = await step('bootstrap workspace', () => bootstrap(app!, { workspace: 'growthdesk bench', email: BENCH_EMAIL, project: PROJECT_NAME }))
    if (args.timezone !== 'UTC') await sql`update projects set timezone = ${args.timezone!} where id = ${boot.project.id}`
    keys = { mcp: boot.keys.mcp, ingest: boot.keys.ingest }
    dataset = {
      projectId: boot.project.id,
      timeZone: args.timezone!,
      submittedBy: boot.user.id,
      ...size,
      now,
      today: localDate(now, args.timezone!),
    }
    await loadAll(sql, dataset, boot.workspace.id)
  } else {
    const [project] = await sql<{ id: string; timezone: string; userId: string }[]>`
      select p.id, p.timezone, u.id as "userId" from projects p join users u on u.workspace_id = p.workspace_id
      where u.email = ${BENCH_EMAIL} and p.name = ${PROJECT_NAME} limit 1`
    if (!project) throw new Error(`--reuse: no bench project in ${dbName}; run without --reuse first (with --keep).`)
    const mcp = await createKey(app, { email: BENCH_EMAIL, kind: 'mcp', name: 'bench reuse' })
    const ingest = await createKey(app, { email: BENCH_EMAIL, kind: 'ingest', project: project.id, name: 'bench reuse' })
    keys = { mcp: mcp.key, ingest: ingest.key }
    dataset = { projectId: project.id, timeZone: project.timezone, submittedBy: project.userId, ...size, now, today: localDate(now, project.timezone) }
  }

  // -------------------------------------------------------------------------------------------
  // Data set summary
  const [facts] = await sql<{ events: string; users: string; opportunities: string; pending_potential: string; first_day: string; last_day: string }[]>`
    select (select sum(events) from project_event_stats where project_id = ${dataset.projectId})::text as events,
           (select count(distinct distinct_id) from daily_event_users where project_id = ${dataset.projectId} and event = 'signup')::text as users,
           (select sum(n) from opportunity_counts where project_id = ${dataset.projectId})::text as opportunities,
           (select sum(n) from opportunity_counts where project_id = ${dataset.projectId} and status = 'pending'
              and contribution_type = 'potential_user_opportunity')::text as pending_potential,
           (select min(day)::text from daily_event_counts where project_id = ${dataset.projectId}) as first_day,
           (select max(day)::text from daily_event_counts where project_id = ${dataset.projectId}) as last_day`
  const sizes = await sql<{ name: string; size: string }[]>`
    select t as name, pg_size_pretty(pg_total_relation_size(t::regclass)) as size
    from unnest(array['events', 'daily_event_users', 'daily_event_counts', 'user_activity', 'opportunities']) t`
  log()
  log(`Data: ${fmtInt(Number(facts!.events))} events of ${fmtInt(Number(facts!.users))} users, days ${facts!.first_day} … ${facts!.last_day} (${dataset.timeZone}); ` +
      `${fmtInt(Number(facts!.opportunities))} opportunities (${fmtInt(Number(facts!.pending_potential))} pending potential_user_opportunity)`)
  log(`Sizes: ${sizes.map((s) => `${s.name} ${s.size}`).join(', ')}`)

  // -------------------------------------------------------------------------------------------
  // HTTP
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  client = new Client()
  const auth = { authorization: `Bearer ${keys.mcp}` }
  const base = `${origin}/api/v1/mcp/projects/${dataset.projectId}`
  const endpoints = [
    { key: 'dailyOps', label: 'daily-ops 30d', path: '/daily-ops?window=30d', target: TARGETS.dailyOpsP50 },
    { key: 'summary', label: 'daily-event-summary 30d', path: '/daily-event-summary?window=30d', target: TARGETS.summaryP50 },
    { key: 'listing', label: 'opportunities status+type page 50', path: '/opportunities?status=pending&type=potential_user_opportunity&page=50', target: TARGETS.listingP50 },
  ] as const

  log()
  log(`Load average before the measurements: ${loadAverage()} (${os.cpus().length} CPUs; other work on the machine skews every figure)`)
  log(`HTTP on ${origin}: ${warmup} warm-up + ${requests} sequential requests per endpoint (one kept-alive connection)`)
  const latency: Record<string, { p50: number; p95: number; p99: number; max: number; cpu: CpuUsed }> = {}
  for (const e of endpoints) {
    const before = await cpuSnapshot(sql, dbName)
    const r = await client.run<LatencyResult>({ kind: 'latency', url: base + e.path, headers: auth, warmup, requests })
    const cpu = perUnit(cpuUsed(before, await cpuSnapshot(sql, dbName)), warmup + requests)
    checkBody(e.key, JSON.parse(r.lastBody) as ResponseBody, Number(facts!.pending_potential))
    latency[e.key] = { p50: percentile(r.samples, 50), p95: percentile(r.samples, 95), p99: percentile(r.samples, 99), max: Math.max(...r.samples), cpu }
    log(`  ${e.label.padEnd(36)} p50 ${fmtMs(latency[e.key]!.p50)}  p95 ${fmtMs(latency[e.key]!.p95)}  p99 ${fmtMs(latency[e.key]!.p99)}  max ${fmtMs(latency[e.key]!.max)}` +
        `  | CPU per request: ${fmtCpu(cpu)}`)
  }

  const cannon: Record<string, Awaited<ReturnType<typeof runCannon>>> = {}
  async function runCannon(url: string) {
    return client!.run<{ requestsPerSecond: number; total: number; p50: number; p90: number; p99: number; max: number; errors: number; timeouts: number; non2xx: number }>(
      { kind: 'autocannon', url, headers: auth, connections: 10, seconds: cannonSeconds }
    )
  }
  if (cannonSeconds > 0) {
    log()
    log(`autocannon: 10 connections, ${cannonSeconds} s per endpoint (latency in whole ms)`)
    for (const e of endpoints) {
      const r = await runCannon(base + e.path)
      cannon[e.key] = r
      const bad = r.errors + r.timeouts + r.non2xx
      log(`  ${e.label.padEnd(36)} ${fmtInt(r.requestsPerSecond)} req/s  p50 ${r.p50} ms  p90 ${r.p90} ms  p99 ${r.p99} ms${bad ? `  ERRORS ${bad}` : ''}`)
    }
  }

  // -------------------------------------------------------------------------------------------
  // The naive query, straight on the database
  log()
  log(`Naive query (raw events, count distinct), 1 warm-up + ${naiveRuns} runs:`)
  const naiveSamples: number[] = []
  const naiveSql = postgres(benchUrl, { max: 1, ...quiet })
  try {
    for (let i = 0; i <= naiveRuns; i++) {
      const started = performance.now()
      const rows = await naiveSql`
        select (occurred_at at time zone 'UTC')::date as day, count(distinct distinct_id)
        from events where project_id = ${dataset.projectId} and event = 'daily_use' and occurred_at >= now() - interval '30 days'
        group by 1`
      const ms = performance.now() - started
      if (rows.length === 0) throw new Error('the naive query found no events: the data do not cover the last 30 days')
      if (i > 0) naiveSamples.push(ms)
      log(`  ${i === 0 ? 'warm-up' : `run ${i}`}: ${fmtMs(ms)} (${rows.length} days)`)
    }
  } finally {
    await naiveSql.end()
  }
  const naiveP50 = percentile(naiveSamples, 50)

  // -------------------------------------------------------------------------------------------
  // Ingestion through HTTP (last: it adds data)
  log()
  const maxBatches = Math.ceil((ingestSeconds * 80_000) / BATCH)
  log(`Ingestion: POST /v1/events, batches of ${BATCH} new events, ${ingestClients} concurrent clients, up to ${ingestSeconds} s or ${maxBatches} batches`)
  const ingestTask = { kind: 'ingest', url: `${origin}/v1/events`, key: keys.ingest, clients: ingestClients, batchSize: BATCH, users: dataset.users, spreadHours: 48 } as const
  let warmupAccepted = 0
  if (ingestWarmup > 0) {
    // The caches the timed run will need (index pages, plans, JIT) are filled by real ingestion first.
    const w = await client.run<IngestResult>({ ...ingestTask, seconds: ingestWarmup, maxBatches: Math.ceil((ingestWarmup * 80_000) / BATCH) })
    warmupAccepted = w.accepted
    log(`  warm-up: ${fmtInt(w.accepted)} events in ${(w.elapsedMs / 1000).toFixed(1)} s (not counted)${w.failures.length ? `; FAILED ${w.failures.length}: ${w.failures[0]}` : ''}`)
  }
  const ingestBefore = await cpuSnapshot(sql, dbName)
  const ing = await client.run<IngestResult>({ ...ingestTask, seconds: ingestSeconds, maxBatches })
  const ingestCpu = cpuUsed(ingestBefore, await cpuSnapshot(sql, dbName))
  if (ing.failures.length) log(`  FAILED requests: ${ing.failures.length}; first: ${ing.failures[0]}`)
  const perSecond = ing.accepted / (ing.elapsedMs / 1000)
  log(`  ${fmtInt(ing.accepted)} events accepted (${ing.duplicates} duplicates) in ${ing.batches} batches over ${(ing.elapsedMs / 1000).toFixed(2)} s: ` +
      `${fmtInt(perSecond)} events/s; per batch p50 ${fmtMs(percentile(ing.latencies, 50))}, p95 ${fmtMs(percentile(ing.latencies, 95))}`)
  const cpuPer1000 = perUnit(ingestCpu, ing.accepted / 1000)
  // What the server and its backends could do with every CPU of this machine to themselves.
  const ceiling = cpuPer1000.databaseMs === undefined ? undefined : (os.cpus().length * 1000 * 1000) / (cpuPer1000.serverMs + cpuPer1000.databaseMs)
  log(`  CPU per 1000 events: ${fmtCpu(cpuPer1000)}` +
      (ceiling === undefined ? '' : ` → CPU-bound ceiling on ${os.cpus().length} otherwise idle CPUs ≈ ${fmtInt(ceiling)} events/s (excludes WAL writer, checkpointer, client)`))
  const [after] = await sql<{ events: string }[]>`select sum(events)::text as events from project_event_stats where project_id = ${dataset.projectId}`
  const expected = Number(facts!.events) + warmupAccepted + ing.accepted
  if (Number(after!.events) !== expected) throw new Error(`project_event_stats.events is ${after!.events}, expected ${expected}`)

  // -------------------------------------------------------------------------------------------
  // Results
  const ratio = naiveP50 / latency.dailyOps!.p50
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL')
  const rows: string[][] = endpoints.map((e) => [
    `GET ${e.label} (sequential, n=${requests})`,
    `p50 ${fmtMs(latency[e.key]!.p50)}, p95 ${fmtMs(latency[e.key]!.p95)}`,
    `p50 ≤ ${e.target} ms`,
    verdict(latency[e.key]!.p50 <= e.target),
  ])
  rows.push([
    `POST /v1/events (${BATCH}/batch, ${ingestClients} clients, ${(ing.elapsedMs / 1000).toFixed(1)} s)`,
    `${fmtInt(perSecond)} events/s`,
    `≥ ${fmtInt(TARGETS.ingestPerSecond)} events/s`,
    verdict(perSecond >= TARGETS.ingestPerSecond && ing.failures.length === 0),
  ])
  if (ceiling !== undefined) rows.push([`  CPU-bound ceiling, ${os.cpus().length} idle CPUs (estimate)`, `${fmtInt(ceiling)} events/s`, '', ''])
  rows.push([`naive raw-events query 30d (p50 of ${naiveRuns})`, fmtMs(naiveP50), '', ''])
  rows.push(['naive p50 / daily-ops p50', `${ratio.toFixed(0)}×`, `≥ ${TARGETS.naiveRatio}×`, verdict(ratio >= TARGETS.naiveRatio)])
  for (const e of endpoints) {
    const c = cannon[e.key]
    if (c) rows.push([`GET ${e.label} (autocannon, 10 conn.)`, `${fmtInt(c.requestsPerSecond)} req/s, p50 ${c.p50} ms, p99 ${c.p99} ms`, '', ''])
  }
  const loadTotal = loadSteps.reduce((s, x) => s + x.seconds, 0)
  log()
  log(`Results — ${fmtInt(Number(facts!.events))} events, ${fmtInt(Number(facts!.users))} users, ${fmtInt(Number(facts!.opportunities))} opportunities; ` +
      `${reuse ? 'reused database' : `load ${loadTotal.toFixed(1)} s`}`)
  log(table(['measure', 'value', 'target', 'result'], rows))
  log(`Load average at the end: ${loadAverage()}`)
  const failed = rows.filter((r) => r[3] === 'FAIL').length
  log()
  log(failed ? `${failed} target(s) missed.` : 'All targets met.')
  if (scale !== 1) log(`The targets are set for the full size; at scale ${scale} they are indicative only.`)
  if (failed) process.exitCode = 1
}

/** The responses carry what the window should: otherwise the timings would be of empty answers. */
interface ResponseBody {
  days?: { daily_use_users?: number }[]
  totals?: { event: string; count: number }[]
  total?: number
  items?: { status: string; contribution_type: string }[]
}
function checkBody(key: string, body: ResponseBody, pendingPotential: number) {
  const fail = (why: string) => {
    throw new Error(`${key}: unexpected response (${why}): ${JSON.stringify(body).slice(0, 400)}`)
  }
  if (key === 'dailyOps') {
    if (body.days?.length !== 30) fail('30 days expected')
    if (!body.days!.some((d) => (d.daily_use_users ?? 0) > 0)) fail('no daily_use users in the window')
  } else if (key === 'summary') {
    if (body.days?.length !== 30) fail('30 days expected')
    if (!body.totals?.some((t) => t.event === 'daily_use' && t.count > 0)) fail('no daily_use total')
  } else {
    if (body.total !== pendingPotential) fail(`total ${body.total} ≠ ${pendingPotential}`)
    const expected = Math.max(0, Math.min(20, pendingPotential - 49 * 20))
    if (body.items?.length !== expected) fail(`${expected} items expected on page 50`)
    if (body.items!.some((o) => o.status !== 'pending' || o.contribution_type !== 'potential_user_opportunity')) fail('filters not applied')
  }
}

async function loadAll(sql: Sql, d: Dataset, workspaceId: string) {
  const before = await indexDefinitions(sql, ['events', 'opportunities'])
  // Autovacuum would start on the fresh tables in the middle of the load; VACUUM ANALYZE runs at the end.
  const bulkTables = ['events', 'daily_event_users', 'daily_event_counts', 'user_activity', 'opportunities', 'opportunity_counts']
  for (const t of bulkTables) await sql.unsafe(`alter table ${t} set (autovacuum_enabled = false)`)
  const eventIndexes = await dropSecondaryIndexes(sql, 'events')
  const eventsStarted = performance.now()
  const every = Math.max(1, Math.ceil(d.events / 10 / 500_000)) * 500_000
  await step(`events: insert ${fmtInt(d.events)} rows`, () =>
    loadEvents(sql, d, jobs, 500_000, (done) => {
      if (done % every === 0 && done < d.events) log(`    … ${fmtInt(done)} (${((performance.now() - eventsStarted) / 1000).toFixed(0)} s)`)
    })
  )
  for (const r of rollupSteps) await step(`rollup: ${r.table}`, () => buildRollup(sql, r, d.projectId))
  await step(`events: create ${eventIndexes.length} indexes (${eventIndexes.map((i) => i.name).join(', ')})`, () => createIndexes(sql, eventIndexes, jobs))

  const oppIndexes = await dropSecondaryIndexes(sql, 'opportunities')
  await step(`opportunities: insert ${fmtInt(d.opportunities)} rows (trigger on)`, () =>
    loadOpportunities(sql, d, jobs, 250_000, () => {})
  )
  await step(`opportunities: create ${oppIndexes.length} indexes`, () => createIndexes(sql, oppIndexes, jobs))
  const afterDefs = await indexDefinitions(sql, ['events', 'opportunities'])
  if (JSON.stringify(before) !== JSON.stringify(afterDefs)) throw new Error('the indexes after the load differ from the schema’s')

  const mismatches = await opportunityCountMismatches(sql, d.projectId)
  if (mismatches !== 0) throw new Error(`opportunity_counts differs from a count of opportunities in ${mismatches} rows`)
  log('  check: opportunity_counts (kept by the trigger) = count of opportunities per (type, status, evaluation): exact')

  if (verify) {
    const v = await step('verify: re-ingest all events into a twin project', () => verifyRollupsByIngestion(app!, sql, d, workspaceId))
    const bad = v.results.filter((r) => r.differing !== 0)
    if (bad.length) throw new Error(`rollups differ from ingestion: ${bad.map((r) => `${r.table} ${r.differing} rows`).join(', ')}`)
    log(`  check: rollups identical to the ingest path's for ${fmtInt(v.events)} events (${fmtInt(v.events / v.ingestSeconds)} events/s in-process): ` +
        v.results.map((r) => r.table).join(', '))
  } else {
    log('  check: rollups vs ingest path skipped at this size (--verify to force)')
  }

  for (const t of bulkTables) await sql.unsafe(`alter table ${t} reset (autovacuum_enabled)`)
  await step('VACUUM ANALYZE', () =>
    sql.unsafe('vacuum (analyze) events, daily_event_users, daily_event_counts, user_activity, project_event_stats, opportunities, opportunity_counts, projects, api_keys, users, memberships')
  )
  await step('CHECKPOINT', () => sql.unsafe('checkpoint'))
}

try {
  await main()
} catch (err) {
  process.exitCode = 1
  process.stderr.write(`\nbench:metrics failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
} finally {
  await cleanup()
}
