// npm run bench:metrics [-- --scales 0.02,0.2] [--keep] [--reuse] …
//
// The performance sections of issues 3 and 14, end to end on the local PostgreSQL, at two data
// sizes (or more) so that what grows with the data shows side by side. For each size:
//  1. a fresh database (dropped first), the app built on it (migrations), a bootstrapped workspace;
//  2. events of users over the 90 days ending today plus opportunities, generated on the server
//     (bench/load.ts), rollups built from the raw events, then VACUUM ANALYZE;
//  3. p50/p95 of every read over HTTP, sequentially, from a separate client process: overview,
//     daily-ops, daily-event-summary (30 days, and 90 days from/to compared with the 90 before), retention (by day and by week),
//     the event stream, and the listing's first, filtered, last
//     and middle pages (by page number and by cursor);
//  4. the naive raw-events query a peer uses, timed directly, against daily-ops;
//  5. at the largest size only: autocannon at 10 connections and ingestion throughput through
//     POST /v1/events (batches of 1000, several clients);
// then the reads side by side with their growth, a table of results against the targets, and the
// databases dropped unless --keep. Nothing is written to the repository; the exit code is 1 when
// a target is missed.
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import postgres, { type Sql } from 'postgres'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap, createKey } from '../bin/admin.ts'
import { addDays, localDate } from '../core/time.ts'
import { cpuSnapshot, cpuUsed, type CpuUsed } from './cpu.ts'
import type { CannonResult, IngestResult, LatencyResult } from './client.ts'
import { Client, numericOption } from './client-process.ts'
import { checkDatabaseName, databaseExists, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'
import {
  buildRollup, createIndexes, dropSecondaryIndexes, indexDefinitions, loadEvents, loadOpportunities,
  opportunityCountMismatches, rollupSteps, verifyRollupsByIngestion, type Dataset,
} from './load.ts'

const USAGE = `Usage: npm run bench:metrics -- [options]

  --scales <a,b,…>     the data sizes, as factors of 10 M events, 200 k users, 1 M opportunities
                       (env BENCH_SCALES; default 0.02,0.2 = 200 k and 2 M events, a few minutes;
                       the full growth run is --scales 0.05,1, ~10 min)
  --scale <f>          one size only (env BENCH_SCALE)
  --keep               keep the bench databases afterwards
  --reuse              reuse kept bench databases (no drop, no load; new keys); data must be from today
  --db-name <name>     database name (default growthdesk_bench; with several sizes, <name>_1, <name>_2 …);
                       server from BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
  --timezone <tz>      project time zone (default UTC)
  --jobs <n>           connections used for the bulk load (default 2)
  --requests <n>       sequential requests per read after the warm-up (default 200; the middle page
                       by page number, which reads its offset, gets a tenth of that)
  --warmup <n>         warm-up requests per read (default 20)
  --cannon <s>         autocannon seconds per endpoint at 10 connections, largest size, 0 = skip (default 5)
  --ingest-seconds <s> ingestion run length, largest size (default 10)
  --ingest-warmup <s>  ingestion before the timed run, not counted (default 3; 0 = none)
  --ingest-clients <n> concurrent ingestion clients (default 4)
  --naive-runs <n>     timed runs of the naive query after one warm-up run (default 5)
  --verify / --no-verify
                       re-ingest every bulk event through the service's ingest SQL into a twin
                       project and compare the rollups (default: on for sizes of ≤ 200 000 events)
`
const { values: args } = parseArgs({
  options: {
    scale: { type: 'string' },
    scales: { type: 'string' },
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

const num = numericOption(USAGE)

const scaleList = (args.scale ?? (args.scales === undefined ? process.env.BENCH_SCALE : undefined)) !== undefined
  ? [args.scale ?? process.env.BENCH_SCALE!]
  : (args.scales ?? process.env.BENCH_SCALES ?? '0.02,0.2').split(',')
const scales = scaleList.map((v) => num('scales', v.trim(), 0.0001, 10)).sort((a, b) => a - b)
if (scales.length > 4) {
  process.stderr.write(`--scales takes at most 4 sizes.\n\n${USAGE}`)
  process.exit(2)
}
// At most 60 characters: with several sizes, each database's name takes a suffix (_1 … _4).
const dbName = checkDatabaseName(args['db-name']!, 60)
const jobs = num('jobs', args.jobs, 1, 16)
const requests = num('requests', args.requests, 1, 100_000)
const warmup = num('warmup', args.warmup, 0, 100_000)
const cannonSeconds = num('cannon', args.cannon, 0, 600)
const ingestSeconds = num('ingest-seconds', args['ingest-seconds'], 1, 600)
const ingestWarmup = num('ingest-warmup', args['ingest-warmup'], 0, 600)
const ingestClients = num('ingest-clients', args['ingest-clients'], 1, 64)
const naiveRuns = num('naive-runs', args['naive-runs'], 1, 100)

const SIZE = { events: 10_000_000, users: 200_000, opportunities: 1_000_000, days: 90 }
function sizeOf(scale: number) {
  const size = {
    events: Math.round(SIZE.events * scale),
    users: Math.max(1, Math.round(SIZE.users * scale)),
    opportunities: Math.round(SIZE.opportunities * scale),
    days: SIZE.days,
  }
  if (size.events < size.users) size.events = size.users // every user signs up once
  return size
}
const verifyAt = (events: number) => (args['no-verify'] ? false : (args.verify ?? events <= 200_000))

const TARGETS = {
  dailyOpsP50: 20,
  summaryP50: 50,
  listingP50: 10,
  ingestPerSecond: 20_000,
  naiveRatio: 1000,
  /** The overview within this factor of daily-ops, at every size. */
  overviewVsDailyOps: 2,
  /** Retention (30 days of cohorts) within this factor of daily-ops, at every size (issue 29). */
  retentionVsDailyOps: 2,
  /** Any page of the listing within this factor of page 1, at every size. */
  pageVsFirst: 5,
}
const BENCH_EMAIL = 'bench@growthdesk.bench'
/** The bench user's identity in the project's events: the heaviest generated user, so the stream has events. */
const BENCH_DISTINCT_ID = 'user_0'
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

const dbNames = scales.length === 1 ? [dbName] : scales.map((_, i) => `${dbName}_${i + 1}`)

/** What is open for the size being measured, so that a signal can close it. */
let open: { app?: FastifyInstance; loadSql?: Sql } = {}
let client: Client | undefined

async function closeOpen() {
  const { app, loadSql } = open
  open = {}
  await loadSql?.end({ timeout: 5 }).catch(() => {})
  await app?.close().catch(() => {})
}

const cleanup = registerCleanup(async () => {
  client?.close()
  await closeOpen()
  if (!args.keep) {
    if (await dropDatabases(dbNames)) log(`Dropped the database${dbNames.length > 1 ? 's' : ''} ${dbNames.join(', ')}.`)
    else process.exitCode = 1
  } else {
    log(`Kept the database${dbNames.length > 1 ? 's' : ''}: ${dbNames.map(databaseUrl).join(', ')}`)
  }
})

type Latency = { p50: number; p95: number; p99: number; max: number; cpu: CpuUsed; n: number }
interface Read {
  key: string
  label: string
  path: string
  /** Fewer requests for a read that is slow by design (the middle page by number). */
  few?: boolean
}
interface SizeResult {
  scale: number
  facts: { events: number; users: number; opportunities: number; pendingPotential: number; cohortUsers: number }
  loadSeconds: number | undefined
  reads: Read[]
  latency: Record<string, Latency>
  naiveP50: number
  naiveSamples: number[]
  cannon: Record<string, { requestsPerSecond: number; p50: number; p99: number; errors: number; timeouts: number; non2xx: number }>
  ingest?: { perSecond: number; failures: number; elapsedMs: number; ceiling: number | undefined }
  loadBefore: string
  loadAfter: string
}

async function measureSize(scale: number, name: string, last: boolean): Promise<SizeResult> {
  const size = sizeOf(scale)
  const benchUrl = databaseUrl(name)
  loadSteps.length = 0
  const reuse = args.reuse && (await databaseExists(name))
  log()
  log(`=== size: ${fmtInt(size.events)} events, ${fmtInt(size.users)} users, ${size.days} days, ${fmtInt(size.opportunities)} opportunities (scale ${scale})`)
  log(`database: ${benchUrl}${reuse ? ' (reused)' : ''}`)
  log()
  log('Load')
  if (!reuse) await step(`drop + create database ${name}`, () => recreateDatabase(name))

  const app = await step('build app (migrations)', () =>
    buildApp({
      // The configuration a deployment would read from this environment (defaults for the rest).
      config: { ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_INGEST_MAX: '1000000', RATE_LIMIT_CONCURRENCY: '0' }), database: { kind: 'postgres', url: benchUrl }, logLevel: 'warn' },
      logger: false,
    })
  )
  open.app = app
  // Session settings for the bulk work only; the server's configuration is left alone.
  const sql = postgres(benchUrl, {
    max: jobs,
    ...quiet,
    connection: { application_name: 'growthdesk-bench-load', synchronous_commit: 'off', work_mem: '256MB', maintenance_work_mem: '1GB' },
  })
  open.loadSql = sql

  let keys: { mcp: string; ingest: string }
  let dataset: Dataset
  const now = new Date()
  if (!reuse) {
    const boot = await step('bootstrap workspace', () => bootstrap(app, { workspace: 'growthdesk bench', email: BENCH_EMAIL, project: PROJECT_NAME }))
    if (args.timezone !== 'UTC') await sql`update projects set timezone = ${args.timezone!} where id = ${boot.project.id}`
    keys = { mcp: boot.keys.mcp, ingest: boot.keys.ingest }
    dataset = { projectId: boot.project.id, timeZone: args.timezone!, submittedBy: boot.user.id, ...size, now, today: localDate(now, args.timezone!) }
    await loadAll(app, sql, dataset, boot.workspace.id, verifyAt(size.events))
  } else {
    const [project] = await sql<{ id: string; timezone: string; userId: string }[]>`
      select p.id, p.timezone, u.id as "userId" from projects p join users u on u.workspace_id = p.workspace_id
      where u.email = ${BENCH_EMAIL} and p.name = ${PROJECT_NAME} limit 1`
    if (!project) throw new Error(`--reuse: no bench project in ${name}; run without --reuse first (with --keep).`)
    const mcp = await createKey(app, { email: BENCH_EMAIL, kind: 'mcp', name: 'bench reuse' })
    const ingest = await createKey(app, { email: BENCH_EMAIL, kind: 'ingest', project: project.id, name: 'bench reuse' })
    keys = { mcp: mcp.key, ingest: ingest.key }
    dataset = { projectId: project.id, timeZone: project.timezone, submittedBy: project.userId, ...size, now, today: localDate(now, project.timezone) }
  }
  // The event stream lists the caller's own events: the bench user is the heaviest generated user.
  await sql`update memberships set distinct_id = ${BENCH_DISTINCT_ID} where project_id = ${dataset.projectId} and user_id = ${dataset.submittedBy}`

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
    from unnest(array['events', 'daily_event_users', 'retention_cells', 'daily_event_counts', 'user_activity', 'user_activity_days', 'opportunities']) t`
  log()
  log(`Data: ${fmtInt(Number(facts!.events))} events of ${fmtInt(Number(facts!.users))} users, days ${facts!.first_day} … ${facts!.last_day} (${dataset.timeZone}); ` +
      `${fmtInt(Number(facts!.opportunities))} opportunities (${fmtInt(Number(facts!.pending_potential))} pending potential_user_opportunity)`)
  log(`Sizes: ${sizes.map((s) => `${s.name} ${s.size}`).join(', ')}`)
  // Retention sums cells, whatever the cohorts' sizes: how many users the 30-day read covers.
  const [cohort] = await sql<{ n: string }[]>`
    select coalesce(sum(users), 0)::text as n from retention_cohorts
    where project_id = ${dataset.projectId} and event = 'signup' and day > ${dataset.today}::date - 30 and day <= ${dataset.today}::date`
  log(`Retention's 30-day cohorts: ${fmtInt(Number(cohort!.n))} users (their returns read from cells, not per user)`)
  const sizeFacts = { events: Number(facts!.events), users: Number(facts!.users), opportunities: Number(facts!.opportunities), pendingPotential: Number(facts!.pending_potential), cohortUsers: Number(cohort!.n) }

  // -------------------------------------------------------------------------------------------
  // HTTP reads
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  const origin = `http://127.0.0.1:${port}`
  const auth = { authorization: `Bearer ${keys.mcp}` }
  const base = `${origin}/api/v1/mcp/projects/${dataset.projectId}`
  const listing = async (query: string) => {
    const res = await fetch(`${base}/opportunities?${query}`, { headers: auth })
    if (res.status !== 200) throw new Error(`listing ${query}: ${res.status} ${await res.text()}`)
    return (await res.json()) as { items: { event_id: string }[]; total_pages: number; next_cursor: string | null }
  }
  // The pages a client walking the whole list reaches: the last one and the middle one, by
  // number and by the cursor of the page before (fetched once here).
  const pages = (await listing('page=1')).total_pages
  const middle = Math.max(1, Math.floor(pages / 2))
  const cursorBefore = async (page: number) => (page > 1 ? (await listing(`page=${page - 1}`)).next_cursor : null)
  const [lastCursor, middleCursor] = [await cursorBefore(pages), await cursorBefore(middle)]
  const reads: Read[] = [
    { key: 'overview', label: 'overview', path: '/overview' },
    { key: 'dailyOps', label: 'daily-ops 30d', path: '/daily-ops?window=30d' },
    { key: 'summary', label: 'daily-event-summary 30d', path: '/daily-event-summary?window=30d' },
    // Retention (issue 29): 30 days of cohorts, by day (7 days on) and by week (4 weeks on).
    { key: 'retention', label: 'retention 30d, by day, 7 periods', path: '/retention?window=30d' },
    { key: 'retentionWeek', label: 'retention 30d, by week, 4 periods', path: '/retention?period=week&window=30d' },
    // Ranged reads: the 90 days the data spans as from/to, compared with the 90 before (180 days of counters, one query).
    { key: 'rangeOps', label: 'daily-ops 90d from/to + compare', path: `/daily-ops?from=${addDays(dataset.today, -89)}&to=${dataset.today}&compare=true` },
    { key: 'rangeSummary', label: 'daily-event-summary 90d from/to + compare', path: `/daily-event-summary?from=${addDays(dataset.today, -89)}&to=${dataset.today}&compare=true` },
    { key: 'stream', label: 'event-stream (own events, 20)', path: '/event-stream?limit=20' },
    { key: 'listing', label: 'opportunities status+type page 50', path: '/opportunities?status=pending&type=potential_user_opportunity&page=50' },
    { key: 'first', label: 'opportunities page 1', path: '/opportunities?page=1' },
    { key: 'lastByNumber', label: `opportunities last page (page=${pages})`, path: `/opportunities?page=${pages}` },
    ...(lastCursor ? [{ key: 'lastByCursor', label: 'opportunities last page (after=cursor)', path: `/opportunities?after=${lastCursor}` }] : []),
    ...(middleCursor ? [{ key: 'middleByCursor', label: 'opportunities middle page (after=cursor)', path: `/opportunities?after=${middleCursor}` }] : []),
    { key: 'middleByNumber', label: `opportunities middle page (page=${middle})`, path: `/opportunities?page=${middle}`, few: true },
  ]

  const loadBefore = loadAverage()
  log()
  log(`Load average before the measurements: ${loadBefore} (${os.cpus().length} CPUs; other work on the machine skews every figure)`)
  log(`HTTP on ${origin}: ${warmup} warm-up + ${requests} sequential requests per read (one kept-alive connection)`)
  const latency: Record<string, Latency> = {}
  const bodies: Record<string, string> = {}
  for (const e of reads) {
    const n = e.few ? Math.max(1, Math.ceil(requests / 10)) : requests
    const w = e.few ? Math.min(warmup, 2) : warmup
    const before = await cpuSnapshot(sql, name)
    const r = await client!.run<LatencyResult>({ kind: 'latency', url: base + e.path, headers: auth, warmup: w, requests: n })
    const cpu = perUnit(cpuUsed(before, await cpuSnapshot(sql, name)), w + n)
    bodies[e.key] = r.lastBody
    checkBody(e.key, JSON.parse(r.lastBody) as ResponseBody, sizeFacts.pendingPotential)
    latency[e.key] = { p50: percentile(r.samples, 50), p95: percentile(r.samples, 95), p99: percentile(r.samples, 99), max: Math.max(...r.samples), cpu, n }
    log(`  ${e.label.padEnd(44)} p50 ${fmtMs(latency[e.key]!.p50)}  p95 ${fmtMs(latency[e.key]!.p95)}  p99 ${fmtMs(latency[e.key]!.p99)}  max ${fmtMs(latency[e.key]!.max)}` +
        `  | CPU per request: ${fmtCpu(cpu)}${e.few ? `  (n=${n})` : ''}`)
  }
  // The cursor reaches the very pages the numbers name.
  const ids = (key: string) => JSON.stringify((JSON.parse(bodies[key] ?? '{"items":[]}') as ResponseBody).items?.map((o) => o.event_id))
  if (lastCursor && ids('lastByCursor') !== ids('lastByNumber')) throw new Error('the last page by cursor differs from the last page by number')
  if (middleCursor && ids('middleByCursor') !== ids('middleByNumber')) throw new Error('the middle page by cursor differs from the middle page by number')

  const cannon: SizeResult['cannon'] = {}
  const cannonReads = reads.filter((e) => ['overview', 'dailyOps', 'summary', 'listing'].includes(e.key))
  if (last && cannonSeconds > 0) {
    log()
    log(`autocannon: 10 connections, ${cannonSeconds} s per endpoint (latency in whole ms)`)
    for (const e of cannonReads) {
      const r = await client!.run<CannonResult>({ kind: 'autocannon', url: base + e.path, headers: auth, connections: 10, seconds: cannonSeconds })
      cannon[e.key] = r
      const bad = r.errors + r.timeouts + r.non2xx
      log(`  ${e.label.padEnd(44)} ${fmtInt(r.requestsPerSecond)} req/s  p50 ${r.p50} ms  p90 ${r.p90} ms  p99 ${r.p99} ms${bad ? `  ERRORS ${bad}` : ''}`)
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

  // -------------------------------------------------------------------------------------------
  // Ingestion through HTTP (largest size only, and last: it adds data)
  let ingest: SizeResult['ingest']
  if (last) {
    log()
    const maxBatches = Math.ceil((ingestSeconds * 80_000) / BATCH)
    log(`Ingestion: POST /v1/events, batches of ${BATCH} new events, ${ingestClients} concurrent clients, up to ${ingestSeconds} s or ${maxBatches} batches`)
    const ingestTask = { kind: 'ingest', url: `${origin}/v1/events`, key: keys.ingest, clients: ingestClients, batchSize: BATCH, users: dataset.users, spreadHours: 48 } as const
    let warmupAccepted = 0
    if (ingestWarmup > 0) {
      // The caches the timed run will need (index pages, plans, JIT) are filled by real ingestion first.
      const w = await client!.run<IngestResult>({ ...ingestTask, seconds: ingestWarmup, maxBatches: Math.ceil((ingestWarmup * 80_000) / BATCH) })
      warmupAccepted = w.accepted
      log(`  warm-up: ${fmtInt(w.accepted)} events in ${(w.elapsedMs / 1000).toFixed(1)} s (not counted)${w.failures.length ? `; FAILED ${w.failures.length}: ${w.failures[0]}` : ''}`)
    }
    const ingestBefore = await cpuSnapshot(sql, name)
    const ing = await client!.run<IngestResult>({ ...ingestTask, seconds: ingestSeconds, maxBatches })
    const ingestCpu = cpuUsed(ingestBefore, await cpuSnapshot(sql, name))
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
    const expected = sizeFacts.events + warmupAccepted + ing.accepted
    if (Number(after!.events) !== expected) throw new Error(`project_event_stats.events is ${after!.events}, expected ${expected}`)
    // The overview's rollup is still the count it replaces, after concurrent ingestion.
    const [exact] = await sql<{ kept: string; counted: string }[]>`
      select (select coalesce(sum(users), 0) from user_activity_days where project_id = ${dataset.projectId})::text as kept,
             (select count(*) from user_activity where project_id = ${dataset.projectId})::text as counted`
    if (exact!.kept !== exact!.counted) throw new Error(`user_activity_days sums to ${exact!.kept}, user_activity has ${exact!.counted} rows`)
    log(`  check: user_activity_days sums to the ${fmtInt(Number(exact!.counted))} rows of user_activity after concurrent ingestion: exact`)
    ingest = { perSecond, failures: ing.failures.length, elapsedMs: ing.elapsedMs, ceiling }
  }

  const loadAfter = loadAverage()
  log(`Load average at the end of this size: ${loadAfter}`)
  await closeOpen()
  return {
    scale,
    facts: sizeFacts,
    loadSeconds: reuse ? undefined : loadSteps.reduce((s, x) => s + x.seconds, 0),
    reads,
    latency,
    naiveP50: percentile(naiveSamples, 50),
    naiveSamples,
    cannon,
    ingest,
    loadBefore,
    loadAfter,
  }
}

async function main() {
  log(`growthdesk bench:metrics — PostgreSQL ${await serverVersion()}, ${os.cpus().length} CPUs, Node ${process.version}`)
  log(`sizes: ${scales.map((s) => `scale ${s}`).join(', ')}; load average at the start ${loadAverage()}`)
  client = new Client()
  const results: SizeResult[] = []
  for (const [i, scale] of scales.entries()) results.push(await measureSize(scale, dbNames[i]!, i === scales.length - 1))

  // -------------------------------------------------------------------------------------------
  // Side by side
  const label = (r: SizeResult) => `${compact(r.facts.events)} ev / ${compact(r.facts.users)} u / ${compact(r.facts.opportunities)} opp`
  const first = results[0]!
  const largest = results.at(-1)!
  log()
  log(`Reads side by side (p50, p95 in brackets; sequential, one connection)${results.length > 1 ? ' — growth = p50 at the largest size / p50 at the smallest' : ''}`)
  const keys = largest.reads.map((e) => e.key)
  const labelOf = (key: string, r: SizeResult) => r.reads.find((e) => e.key === key)?.label.replace(/ \((page|after)=.*\)$/, (m) => (m.includes('after') ? ' (cursor)' : ' (page number)')) ?? key
  const side = keys.map((key) => [
    labelOf(key, largest),
    ...results.map((r) => (r.latency[key] ? `${fmtMs(r.latency[key]!.p50)} (${fmtMs(r.latency[key]!.p95)})` : '—')),
    ...(results.length > 1 ? [first.latency[key] && largest.latency[key] ? `${(largest.latency[key]!.p50 / first.latency[key]!.p50).toFixed(1)}×` : '—'] : []),
  ])
  side.push([
    `naive raw-events query 30d (p50 of ${naiveRuns})`,
    ...results.map((r) => fmtMs(r.naiveP50)),
    ...(results.length > 1 ? [`${(largest.naiveP50 / first.naiveP50).toFixed(1)}×`] : []),
  ])
  log(table(['read', ...results.map(label), ...(results.length > 1 ? ['growth'] : [])], side))

  // -------------------------------------------------------------------------------------------
  // Targets
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'FAIL')
  const rows: string[][] = []
  const ratio = (r: SizeResult, a: string, b: string) => r.latency[a]!.p50 / r.latency[b]!.p50
  for (const r of results) {
    const at = compact(r.facts.events) + ' ev'
    const ov = ratio(r, 'overview', 'dailyOps')
    rows.push([`overview p50 / daily-ops p50 (${at})`, `${ov.toFixed(2)}×`, `≤ ${TARGETS.overviewVsDailyOps}×`, verdict(ov <= TARGETS.overviewVsDailyOps)])
    for (const key of ['retention', 'retentionWeek']) {
      const x = ratio(r, key, 'dailyOps')
      rows.push([`${labelOf(key, r)} p50 / daily-ops p50 (${at}; ${compact(r.facts.cohortUsers)} cohort users)`, `${x.toFixed(2)}×`, `≤ ${TARGETS.retentionVsDailyOps}×`, verdict(x <= TARGETS.retentionVsDailyOps)])
    }
    for (const key of ['lastByNumber', 'lastByCursor', 'middleByCursor']) {
      if (!r.latency[key]) continue
      const x = ratio(r, key, 'first')
      rows.push([`${labelOf(key, r)} p50 / page 1 p50 (${at})`, `${x.toFixed(2)}×`, `≤ ${TARGETS.pageVsFirst}×`, verdict(x <= TARGETS.pageVsFirst)])
    }
    for (const key of ['rangeOps', 'rangeSummary']) {
      if (r.latency[key]) rows.push([`${labelOf(key, r)} p50 / daily-ops 30d p50 (${at})`, `${ratio(r, key, 'dailyOps').toFixed(2)}×`, 'none: side by side', ''])
    }
    if (r.latency.middleByNumber) {
      rows.push([`${labelOf('middleByNumber', r)} p50 / page 1 p50 (${at})`, `${ratio(r, 'middleByNumber', 'first').toFixed(2)}×`, 'none: OFFSET; the cursor is the way', ''])
    }
  }
  const big = largest.latency
  const absolute = [
    ['dailyOps', TARGETS.dailyOpsP50],
    ['summary', TARGETS.summaryP50],
    ['listing', TARGETS.listingP50],
  ] as const
  for (const [key, target] of absolute) {
    rows.push([`GET ${largest.reads.find((e) => e.key === key)!.label} (${compact(largest.facts.events)} ev, n=${requests})`, `p50 ${fmtMs(big[key]!.p50)}, p95 ${fmtMs(big[key]!.p95)}`, `p50 ≤ ${target} ms`, verdict(big[key]!.p50 <= target)])
  }
  const naiveRatio = largest.naiveP50 / big.dailyOps!.p50
  rows.push([`naive p50 / daily-ops p50 (${compact(largest.facts.events)} ev)`, `${naiveRatio.toFixed(0)}×`, `≥ ${TARGETS.naiveRatio}×`, verdict(naiveRatio >= TARGETS.naiveRatio)])
  const ing = largest.ingest
  if (ing) {
    rows.push([
      `POST /v1/events (${BATCH}/batch, ${ingestClients} clients, ${(ing.elapsedMs / 1000).toFixed(1)} s)`,
      `${fmtInt(ing.perSecond)} events/s`,
      `≥ ${fmtInt(TARGETS.ingestPerSecond)} events/s`,
      verdict(ing.perSecond >= TARGETS.ingestPerSecond && ing.failures === 0),
    ])
    if (ing.ceiling !== undefined) rows.push([`  CPU-bound ceiling, ${os.cpus().length} idle CPUs (estimate)`, `${fmtInt(ing.ceiling)} events/s`, '', ''])
  }
  for (const [key, c] of Object.entries(largest.cannon)) {
    rows.push([`GET ${largest.reads.find((e) => e.key === key)!.label} (autocannon, 10 conn.)`, `${fmtInt(c.requestsPerSecond)} req/s, p50 ${c.p50} ms, p99 ${c.p99} ms`, '', ''])
  }
  log()
  log(`Results — ${results.map((r) => `${label(r)}${r.loadSeconds === undefined ? ' (reused)' : ` (load ${r.loadSeconds.toFixed(1)} s)`}`).join('; ')}`)
  log(table(['measure', 'value', 'target', 'result'], rows))
  log(`Load average: ${results.map((r) => `${compact(r.facts.events)} ev ${r.loadBefore} → ${r.loadAfter}`).join('; ')}; now ${loadAverage()}`)
  const failed = rows.filter((r) => r[3] === 'FAIL').length
  log()
  log(failed ? `${failed} target(s) missed.` : 'All targets met.')
  if (largest.scale !== 1) log(`The absolute targets are set for the full size (scale 1); at scale ${largest.scale} they are indicative only.`)
  if (failed) process.exitCode = 1
}

/** 10000000 → 10M, 200000 → 200k. */
function compact(n: number): string {
  if (n >= 1_000_000) return `${Number((n / 1_000_000).toFixed(1))}M`
  if (n >= 1000) return `${Number((n / 1000).toFixed(1))}k`
  return String(n)
}

/** The responses carry what the window should: otherwise the timings would be of empty answers. */
interface ResponseBody {
  days?: { daily_use_users?: number }[]
  previous?: { days: unknown[] } | null
  totals?: { event: string; count: number }[]
  total?: number
  items?: { status: string; contribution_type: string; event_id: string }[]
  unique_users_30d?: number
  distinct_id?: string
  cohorts?: unknown[]
  overall?: { users: number; returned?: (number | null)[] }
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
  } else if (key === 'retention' || key === 'retentionWeek') {
    if (key === 'retention' && body.cohorts?.length !== 30) fail('30 day cohorts expected')
    if (!body.overall?.users) fail('no users in the cohorts')
    if (!body.overall?.returned?.some((n) => (n ?? 0) > 0)) fail('nobody returned')
  } else if (key === 'rangeOps' || key === 'rangeSummary') {
    if (body.days?.length !== 90 || body.previous?.days.length !== 90) fail('90 days and the 90 before expected')
    if (key === 'rangeOps' && !body.days!.some((d) => (d.daily_use_users ?? 0) > 0)) fail('no daily_use users in the range')
    if (key === 'rangeSummary' && !body.totals?.some((t) => t.event === 'daily_use' && t.count > 0)) fail('no daily_use total')
  } else if (key === 'overview') {
    if (!body.unique_users_30d) fail('no active users over 30 days')
  } else if (key === 'stream') {
    if (body.items?.length !== 20) fail('20 events of the bench user expected')
  } else if (key !== 'listing') {
    if (!body.items?.length) fail('a page of items expected')
  } else {
    if (body.total !== pendingPotential) fail(`total ${body.total} ≠ ${pendingPotential}`)
    const expected = Math.max(0, Math.min(20, pendingPotential - 49 * 20))
    if (body.items?.length !== expected) fail(`${expected} items expected on page 50`)
    if (body.items!.some((o) => o.status !== 'pending' || o.contribution_type !== 'potential_user_opportunity')) fail('filters not applied')
  }
}

async function loadAll(app: FastifyInstance, sql: Sql, d: Dataset, workspaceId: string, verify: boolean) {
  const before = await indexDefinitions(sql, ['events', 'opportunities'])
  // Autovacuum would start on the fresh tables in the middle of the load; VACUUM ANALYZE runs at the end.
  const bulkTables = ['events', 'daily_event_users', 'daily_event_counts', 'user_activity', 'user_activity_days', 'opportunities', 'opportunity_counts']
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
    const v = await step('verify: re-ingest all events into a twin project', () => verifyRollupsByIngestion(app, sql, d, workspaceId))
    const bad = v.results.filter((r) => r.differing !== 0)
    if (bad.length) throw new Error(`rollups differ from ingestion: ${bad.map((r) => `${r.table} ${r.differing} rows`).join(', ')}`)
    log(`  check: rollups identical to the ingest path's for ${fmtInt(v.events)} events (${fmtInt(v.events / v.ingestSeconds)} events/s in-process): ` +
        v.results.map((r) => r.table).join(', '))
  } else {
    log('  check: rollups vs ingest path skipped at this size (--verify to force)')
  }

  for (const t of bulkTables) await sql.unsafe(`alter table ${t} reset (autovacuum_enabled)`)
  await step('VACUUM ANALYZE', () =>
    sql.unsafe('vacuum (analyze) events, daily_event_users, retention_cells, retention_cohorts, daily_event_counts, user_activity, user_activity_days, project_event_stats, opportunities, opportunity_counts, projects, api_keys, users, memberships')
  )
  await step('CHECKPOINT', () => sql.unsafe('checkpoint'))
}

try {
  await main()
} catch (err) {
  process.exitCode = 1
  reportFailure('bench:metrics', err)
} finally {
  await cleanup()
}
