// npm run bench:http [-- --rounds 3] [--duration 10] [--connections 50] [--quick] …
//
// The cost of the surfaces over HTTP as they ship, on the local PostgreSQL, against a yardstick
// measured in the same run on the same database (issue 31, item 1):
//  1. a fresh database (dropped at the end, also on Ctrl-C), migrated and bootstrapped in this
//     process (two workspaces: project A and project B), which then lets go of it;
//  2. the app started exactly as `npm start` starts it (bench/server-process.ts: package.json's
//     start script read at run time, start.js, default logging to a file), in a process of its
//     own; the reference (bench/reference-server.ts: plain Fastify + postgres.js, one
//     primary-key lookup) in another, under the same Node flags;
//  3. data: seed-demo's 30 days of events (bin/seed-demo.ts's demoEvents) ingested through POST
//     /v1/events into A by `--ingest-connections` concurrent connections, day by day, the app
//     restarted every few days (new PostgreSQL connections, as postgres.js's max_lifetime and
//     deploys bring in production) so that the counters spread over the 16 shards as a
//     long-running server's do; the same events into B by ONE connection, whose
//     counters are then folded into shard 0 (unsharded); seed-demo's opportunities
//     (bin/demo-data.ts) submitted and reviewed through the tools API into A;
//  4. autocannon (in a child process) on each route, the routes alternated round by round
//     (A B C … then B C … A), medians; server CPU per request from /proc/<pid>/stat of the
//     server's process, PostgreSQL CPU per request from /proc/<pid>/stat of the backends
//     pg_stat_activity lists for it (application_name growthdesk for the app,
//     growthdesk-bench-reference for the reference);
//  5. a results table, each target's ratio (the median of the rounds' ratios) with PASS or FAIL,
//     and the load average. The exit code is 1 when a target is missed or a request failed.
// Routes: ref (reference), rest (REST get_daily_ops 30d on A), flat (the same on B, unsharded),
// list (REST list_opportunities, status and type), project (REST get_project), mcp / mcp26
// (get_daily_ops over MCP, 2025-11-25 and 2026-07-28), mcplist / mcplist26 (list_opportunities
// over MCP, both eras).
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs, isDeepStrictEqual } from 'node:util'
import postgres from 'postgres'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { demoEvents } from '../bin/seed-demo.ts'
import { demoOpportunities } from '../bin/demo-data.ts'
import { Client, freePort, loadAverage, median, numericOption } from './client-process.ts'
import type { CannonResult, CannonTask, IngestResult } from './client.ts'
import { checkDatabaseName, connectToServer, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'
import { processCpuMs } from './cpu.ts'
import { npmStart, startServer, type ServerProcess } from './server-process.ts'

const SCENARIOS = ['ref', 'rest', 'flat', 'list', 'project', 'mcp', 'mcp26', 'mcplist', 'mcplist26'] as const
type Key = (typeof SCENARIOS)[number]

const USAGE = `Usage: npm run bench:http -- [options]

  --rounds <n>              rounds; each runs every chosen route once, each round starting one
                            route later; medians of the rounds (default 3)
  --duration <s>            seconds of measurement per route and round (default 10)
  --warmup <s>              seconds of unmeasured load on each route, every route before the first
                            round (default 3)
  --connections <n>         concurrent connections of the load (default 50)
  --only <list>             comma-separated routes (default all): ${SCENARIOS.join(', ')}
  --opportunities <n>       seed-demo-like opportunities submitted (and reviewed) in project A (default 300)
  --batch <n>               events per POST /v1/events while loading (default 10, as SDKs send them
                            every few seconds; 25 with --quick)
  --ingest-connections <n>  concurrent connections loading project A's events (default 16)
  --days-per-start <n>      the app is restarted every n days of events while they are loaded, so that
                            its connections (and their counter shards) change as a long-running
                            server's do (default 1; 6 with --quick)
  --soak <s>                afterwards, MCP tools/call for this long (both eras alternating), with
                            the server's RSS and CPU per request each minute (default 0: none)
  --quick                   a check of the bench itself (< 2 minutes): 2 rounds of 2 s, 0.5 s
                            warm-up, 60 opportunities, batches of 25, a restart every 6 days; its
                            ratios are no verdict
  --cpu-prof <dir>          the app runs under Node's --cpu-prof and writes a .cpuprofile of each of
                            its starts into <dir> (the last one is the measured server); the
                            profiler costs CPU, so its figures are no verdict
  --db-name <name>          database name (default growthdesk_bench_http); server from BENCH_DATABASE_URL
                            (default postgres://postgres@127.0.0.1:5432/postgres). PostgreSQL's CPU is
                            read from /proc: n/a when the server runs on another machine
`

await main()

async function main() {
  const { values: args } = parseArgs({
    args: process.argv.slice(2),
    options: {
      rounds: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '50' },
      only: { type: 'string', default: SCENARIOS.join(',') },
      opportunities: { type: 'string' },
      batch: { type: 'string' },
      'ingest-connections': { type: 'string', default: '16' },
      'days-per-start': { type: 'string' },
      soak: { type: 'string', default: '0' },
      quick: { type: 'boolean', default: false },
      'db-name': { type: 'string', default: 'growthdesk_bench_http' },
      'cpu-prof': { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (args.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const quick = args.quick!
  const num = numericOption(USAGE)
  const int = numericOption(USAGE, { integer: true })
  const rounds = int('rounds', args.rounds ?? (quick ? '2' : '3'), 1, 100)
  const duration = num('duration', args.duration ?? (quick ? '2' : '10'), 1, 600)
  const warmup = num('warmup', args.warmup ?? (quick ? '0.5' : '3'), 0, 600)
  const connections = int('connections', args.connections, 1, 1000)
  const opportunityCount = int('opportunities', args.opportunities ?? (quick ? '60' : '300'), 12, 10_000)
  const batch = int('batch', args.batch ?? (quick ? '25' : '10'), 1, 1000)
  const ingestConnections = int('ingest-connections', args['ingest-connections'], 2, 64)
  const daysPerStart = int('days-per-start', args['days-per-start'] ?? (quick ? '6' : '1'), 1, 30)
  const soak = num('soak', args.soak, 0, 3600)
  const only = new Set(args.only!.split(',').map((s) => s.trim()))
  for (const s of only) {
    if (!(SCENARIOS as readonly string[]).includes(s)) {
      process.stderr.write(`--only takes ${SCENARIOS.join(', ')} (got ${JSON.stringify(s)}).\n`)
      process.exit(2)
    }
  }
  const dbName = checkDatabaseName(args['db-name']!)
  const log = (line = '') => process.stdout.write(`${line}\n`)
  const benchUrl = databaseUrl(dbName)

  let app: ServerProcess | undefined
  let reference: ServerProcess | undefined
  let monitor: postgres.Sql | undefined
  let setup: postgres.Sql | undefined
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gd-bench-http-'))
  const client = new Client()
  const cannon = (task: Omit<CannonTask, 'kind'>) => client.run<CannonResult>({ kind: 'autocannon', ...task })

  const cleanup = registerCleanup(async () => {
    client.close()
    await reference?.stop().catch((err: unknown) => log(`stopping the reference: ${String(err)}`))
    await app?.stop().catch((err: unknown) => log(`stopping the app: ${String(err)}`))
    await setup?.end({ timeout: 5 }).catch(() => {})
    await monitor?.end({ timeout: 5 }).catch(() => {})
    fs.rmSync(tmp, { recursive: true, force: true })
    if (await dropDatabases([dbName])) log(`Dropped the database ${dbName}.`)
  })

  let failed = false
  try {
    const version = await serverVersion()
    await recreateDatabase(dbName)
    // Migrations and the two workspaces, in this process; the app's process then finds them
    // (no first-start bootstrap). DATA_DIR: where a first start keeps its secrets key, shared.
    const env = { DATABASE_URL: benchUrl, DATA_DIR: path.join(tmp, 'data'), HOST: '127.0.0.1' }
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const local = await buildApp({ config: loadConfig({ ...env, PORT: String(port), LOG_LEVEL: 'silent' }), logger: false })
    const boots = await Promise.all([
      bootstrap(local, { workspace: 'growthdesk bench http A', email: 'bench-http-a@growthdesk.bench', project: 'Bench sharded' }),
      bootstrap(local, { workspace: 'growthdesk bench http B', email: 'bench-http-b@growthdesk.bench', project: 'Bench unsharded' }),
    ]).finally(() => local.close())
    const [bootA, bootB] = boots
    // The app as npm start runs it. The rate limits are configuration, not how it runs: off, or
    // one key's 50 connections would be refused by design.
    const start = npmStart()
    const appEnv = { ...env, PUBLIC_URL: origin, RATE_LIMIT_MAX: '0', RATE_LIMIT_INGEST_MAX: '0', RATE_LIMIT_CONCURRENCY: '0' }
    const startApp = () => startServer({ port, logFile: path.join(tmp, 'app.log'), cpuProf: args['cpu-prof'], env: appEnv })
    app = await startApp()
    const refPort = await freePort()
    reference = await startServer({ port: refPort, logFile: path.join(tmp, 'reference.log'), env: { DATABASE_URL: benchUrl }, script: 'bench/reference-server.ts' })
    // Connected to the server's default database, so that its own backend is never counted.
    monitor = connectToServer()
    setup = postgres(benchUrl, { max: 1, ...quiet, connection: { application_name: 'growthdesk-bench-setup' } })
    log(`growthdesk bench:http — PostgreSQL ${version}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}`)
    log(`app: \`${start.command}\` (pid ${app.pid}, ${origin}, default logging to a file); reference: node ${start.flags.join(' ')} bench/reference-server.ts (pid ${reference.pid})`)
    log(`database ${dbName}; autocannon in a child process, ${connections} connections, ${warmup} s warm-up + ${duration} s per route and round, ${rounds} round(s)`)

    // --- Data -----------------------------------------------------------------------------
    const { events: demo } = demoEvents(bootA.project.id, 'UTC', new Date())
    const days = [...new Set(demo.map((e) => e.day))].sort()
    const bodiesOf = (list: typeof demo) => {
      const bodies: string[] = []
      for (let i = 0; i < list.length; i += batch) bodies.push(JSON.stringify({ events: list.slice(i, i + batch).map(({ day: _, ...e }) => e) }))
      return bodies
    }
    const ingest = async (key: string, bodies: string[], clients: number) => {
      const file = path.join(tmp, 'bodies.jsonl')
      fs.writeFileSync(file, bodies.join('\n'))
      const r = await client.run<IngestResult>({ kind: 'ingest', url: `${origin}/v1/events`, key, clients, batchSize: batch, users: 1, spreadHours: 1, seconds: 3600, maxBatches: bodies.length, bodiesFile: file })
      if (r.failures.length) throw new Error(`ingestion: ${r.failures.length} failed requests; first: ${r.failures[0]}`)
      return r.accepted
    }
    // A server's pool holds at most 10 connections, each writing its own shard (pid % 16) for
    // its lifetime; a long-running server's connections are replaced over days (postgres.js's
    // max_lifetime, restarts, deploys). Here the app is restarted every `daysPerStart` days, so
    // that the counters spread over the shards as in production (ending the connections under
    // it instead made requests fail: postgres.js writes to a socket the server has closed).
    let accepted = 0
    let starts = 1
    for (let d = 0; d < days.length; d++) {
      if (d > 0 && d % daysPerStart === 0) {
        await app.stop()
        app = await startApp()
        starts++
      }
      accepted += await ingest(bootA.keys.ingest, bodiesOf(demo.filter((e) => e.day === days[d])), ingestConnections)
    }
    const flatAccepted = await ingest(bootB.keys.ingest, bodiesOf(demo), 1)
    if (accepted !== demo.length || flatAccepted !== demo.length) throw new Error(`ingestion accepted ${accepted} and ${flatAccepted} of ${demo.length} events`)
    const shards = async (project: string) => {
      const [r] = await setup!<{ shards: number; rows: number; cells: number }[]>`
        select count(distinct shard)::int as shards, count(*)::int as rows, count(distinct (day, event))::int as cells
        from daily_event_counts where project_id = ${project}`
      return r!
    }
    const a = await shards(bootA.project.id)
    const bBefore = await shards(bootB.project.id)
    await foldShards(setup, bootB.project.id)
    const b = await shards(bootB.project.id)
    log(`events: ${demo.length} (seed-demo's 30 days, ${days.length} days) into A by ${ingestConnections} connections in batches of ${batch}, ` +
      `the app restarted every ${daysPerStart === 1 ? 'day' : `${daysPerStart} days`} (${starts} starts): ${a.shards} counter shards, ${a.rows} rows for ${a.cells} (day, event) cells (${(a.rows / a.cells).toFixed(1)} per cell)`)
    log(`        the same into B by 1 connection: ${bBefore.shards} shard(s), ${bBefore.rows} rows, folded into shard 0: ${b.shards} shard, ${b.rows} rows`)

    const serviceA = `Bearer ${bootA.keys.service}`
    const project = bootA.project.id
    const restHeaders = (auth = serviceA) => ({ authorization: auth, 'content-type': 'application/json' })
    const callTool = async (name: string, toolArgs: object, auth = serviceA) => {
      const res = await fetch(`${origin}/v1/tools/${name}`, { method: 'POST', headers: restHeaders(auth), body: JSON.stringify(toolArgs) })
      const json = (await res.json()) as { result?: Record<string, unknown> }
      if (res.status !== 200 || !json.result) throw new Error(`${name}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`)
      return json.result
    }
    // seed-demo's opportunities (texts, types, review paths), through the tools API, 10 at a time.
    const opps = demoOpportunities(project, opportunityCount)
    let reviews = 0
    for (let i = 0; i < opps.length; i += 10) {
      await Promise.all(opps.slice(i, i + 10).map(async (o) => {
        const r = await callTool('submit_opportunity', { project, contribution_type: o.type, key_information: o.lead.info, reason: o.lead.reason, suggested_action: o.lead.action, external_id: `bench-${o.index}` })
        for (const step of o.steps) {
          await callTool('review_opportunity', { project, event_id: r.event_id, status: step.status, note: step.note, ...(step.evaluation !== undefined ? { evaluation: step.evaluation } : {}) })
          reviews++
        }
      }))
    }
    log(`opportunities: ${opps.length} of seed-demo's kind in A (${new Set(opps.map((o) => o.type)).size} types), ${reviews} review steps`)
    await setup.unsafe('vacuum analyze')

    // --- Routes ---------------------------------------------------------------------------
    const dailyOpsArgs = { project, window: '30d' }
    const flatArgs = { project: bootB.project.id, window: '30d' }
    const listArgs = { project, status: 'pending', type: 'potential_user_opportunity' }
    const projectArgs = { project }
    const mcpCall = (name: string, toolArgs: object, meta?: object) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: toolArgs, ...(meta ? { _meta: meta } : {}) } })
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const mcpHeaders = (era: string, tool: string) => ({
      authorization: serviceA,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': era,
      ...(era === '2026-07-28' ? { 'mcp-method': 'tools/call', 'mcp-name': tool } : {}),
    })
    const mcp = (era: string, tool: string, toolArgs: object) => ({ url: `${origin}/mcp`, method: 'POST' as const, headers: mcpHeaders(era, tool), body: mcpCall(tool, toolArgs, era === '2026-07-28' ? meta : undefined) })
    interface Scenario { key: Key; label: string; server: ServerProcess; backends: string; task: Omit<CannonTask, 'kind' | 'connections' | 'seconds'> }
    const scenarios: Scenario[] = [
      { key: 'ref', label: 'reference: primary key', server: reference, backends: 'growthdesk-bench-reference', task: { url: `${reference.origin}/reference`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project }) } },
      { key: 'rest', label: 'REST get_daily_ops 30d', server: app, backends: 'growthdesk', task: { url: `${origin}/v1/tools/get_daily_ops`, method: 'POST', headers: restHeaders(), body: JSON.stringify(dailyOpsArgs) } },
      { key: 'flat', label: 'REST get_daily_ops 30d, unsharded', server: app, backends: 'growthdesk', task: { url: `${origin}/v1/tools/get_daily_ops`, method: 'POST', headers: restHeaders(`Bearer ${bootB.keys.service}`), body: JSON.stringify(flatArgs) } },
      { key: 'list', label: 'REST list_opportunities', server: app, backends: 'growthdesk', task: { url: `${origin}/v1/tools/list_opportunities`, method: 'POST', headers: restHeaders(), body: JSON.stringify(listArgs) } },
      { key: 'project', label: 'REST get_project', server: app, backends: 'growthdesk', task: { url: `${origin}/v1/tools/get_project`, method: 'POST', headers: restHeaders(), body: JSON.stringify(projectArgs) } },
      { key: 'mcp', label: 'MCP get_daily_ops 2025-11-25', server: app, backends: 'growthdesk', task: mcp('2025-11-25', 'get_daily_ops', dailyOpsArgs) },
      { key: 'mcp26', label: 'MCP get_daily_ops 2026-07-28', server: app, backends: 'growthdesk', task: mcp('2026-07-28', 'get_daily_ops', dailyOpsArgs) },
      { key: 'mcplist', label: 'MCP list_opportunities 2025-11-25', server: app, backends: 'growthdesk', task: mcp('2025-11-25', 'list_opportunities', listArgs) },
      { key: 'mcplist26', label: 'MCP list_opportunities 2026-07-28', server: app, backends: 'growthdesk', task: mcp('2026-07-28', 'list_opportunities', listArgs) },
    ]
    const scenario = (key: Key) => scenarios.find((s) => s.key === key)!
    const send = (s: Scenario) => fetch(s.task.url, { method: s.task.method, headers: s.task.headers, body: s.task.body })

    // Once, before any load: every route answers, MCP what REST does, and B's figures are A's.
    const dailyOps = await callTool('get_daily_ops', dailyOpsArgs)
    if ((dailyOps.days as unknown[] | undefined)?.length !== 30) throw new Error(`REST check: get_daily_ops 30d answered ${JSON.stringify(dailyOps).slice(0, 500)}`)
    const flat = await callTool('get_daily_ops', flatArgs, `Bearer ${bootB.keys.service}`)
    if (!isDeepStrictEqual(flat.days, dailyOps.days)) throw new Error(`project B's daily figures differ from A's: ${JSON.stringify(flat.days).slice(0, 300)} vs ${JSON.stringify(dailyOps.days).slice(0, 300)}`)
    const page = await callTool('list_opportunities', listArgs)
    const total = page.total as number
    if (!(total >= 1) || (page.items as unknown[]).length !== Math.min(20, total)) throw new Error(`REST check: list_opportunities answered ${JSON.stringify(page).slice(0, 500)}`)
    await callTool('get_project', projectArgs)
    for (const [key, expected] of [['mcp', dailyOps], ['mcp26', dailyOps], ['mcplist', page], ['mcplist26', page]] as const) {
      const s = scenario(key)
      const res = await send(s)
      const json = (await res.json()) as { result?: { isError?: boolean; structuredContent?: unknown } }
      if (res.status !== 200 || !json.result || json.result.isError || !isDeepStrictEqual(json.result.structuredContent, expected)) {
        throw new Error(`MCP check (${s.label}): ${res.status} ${JSON.stringify(json).slice(0, 1000)}`)
      }
    }
    const refCheck = await send(scenario('ref'))
    const refJson = (await refCheck.json()) as { id?: string }
    if (refCheck.status !== 200 || refJson.id !== project) throw new Error(`reference check: ${refCheck.status} ${JSON.stringify(refJson)}`)
    log(`checked: A and B answer get_daily_ops alike; MCP (both eras) answers what REST does; list_opportunities (status pending, one type): a page of ${(page.items as unknown[]).length} of ${total}`)

    // --- Measurement -----------------------------------------------------------------------
    const pgCpu = async (name: string) => {
      const rows = await monitor!<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${dbName} and application_name = ${name}`
      const usage = new Map<number, number>()
      for (const { pid } of rows) {
        const ms = processCpuMs(pid)
        if (ms !== undefined) usage.set(pid, ms)
      }
      return usage
    }
    const pgUsed = (before: Map<number, number>, after: Map<number, number>) => {
      if (after.size === 0) return undefined
      let ms = 0
      // A backend that appeared meanwhile counts from zero.
      for (const [pid, v] of after) ms += v - (before.get(pid) ?? 0)
      return ms
    }
    interface Measured extends CannonResult { serverUs: number; pgUs: number | undefined }
    const runs: Partial<Record<Key, Measured[]>> = {}
    const chosen = scenarios.filter((s) => only.has(s.key))
    const logBytesBefore = fs.statSync(app.logFile).size
    let appRequests = 0
    log()
    log(`${'route'.padEnd(36)} ${'req/s'.padStart(8)} ${'p99 ms'.padStart(7)} ${'server CPU'.padStart(11)} ${'PostgreSQL CPU'.padStart(15)}  (µs per request)`)
    // Every route is warmed before the first round, not each just before its own first
    // measurement: the app is a fresh process, and the first of its routes measured used to
    // carry the whole process's warm-up (JIT, heap growth): 1.4x the server CPU of its later rounds.
    if (warmup > 0) for (const s of chosen) await cannon({ ...s.task, connections, seconds: warmup })
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round} of ${rounds} (load average ${loadAverage()})`)
      const order = chosen.map((_, i) => chosen[(i + round - 1) % chosen.length]!)
      for (const s of order) {
        const task = { ...s.task, connections }
        const pgBefore = await pgCpu(s.backends)
        const cpuBefore = s.server.cpuMs()
        const r = await cannon({ ...task, seconds: duration })
        const cpuMs = s.server.cpuMs() - cpuBefore
        const pgMs = pgUsed(pgBefore, await pgCpu(s.backends))
        const requests = Math.max(1, r.total)
        if (s.server === app) appRequests += r.total
        const m: Measured = { ...r, serverUs: (cpuMs * 1000) / requests, pgUs: pgMs === undefined ? undefined : (pgMs * 1000) / requests }
        ;(runs[s.key] ??= []).push(m)
        log(`  ${s.label.padEnd(34)} ${fmt(r.requestsPerSecond, 0).padStart(8)} ${fmt(r.p99, 1).padStart(7)} ${fmt(m.serverUs, 0).padStart(11)} ${pgText(m.pgUs).padStart(15)}` +
          (r.non2xx || r.errors || r.timeouts ? `   non-2xx ${r.non2xx}, errors ${r.errors}, timeouts ${r.timeouts}` : ''))
        if (r.non2xx > 0 || r.errors > 0) failed = true
      }
    }
    const logBytes = fs.statSync(app.logFile).size - logBytesBefore

    // --- Results ---------------------------------------------------------------------------
    const medianOf = (list: (number | undefined)[]) => (list.some((v) => v === undefined) ? undefined : median(list as number[]))
    log()
    log(`Medians of ${rounds} round(s):`)
    log('| route | req/s | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req |')
    log('| --- | --- | --- | --- | --- |')
    for (const s of chosen) {
      const list = runs[s.key]!
      log(`| ${s.label} | ${fmt(median(list.map((r) => r.requestsPerSecond)), 0)} | ${fmt(median(list.map((r) => r.p99)), 1)} | ${fmt(median(list.map((r) => r.serverUs)), 0)} | ${pgText(medianOf(list.map((r) => r.pgUs)))} |`)
    }
    log(`the app logged ${fmt(logBytes / Math.max(1, appRequests), 0)} bytes per request (${(logBytes / 2 ** 20).toFixed(1)} MB for ${appRequests} requests)`)
    log()
    // A ratio compares two routes measured in the same round: the median of the rounds' ratios.
    type Measure = 'requestsPerSecond' | 'serverUs' | 'pgUs'
    let targets = 0
    let passed = 0
    const ratio = (label: string, a: Key, b: Key, measure: Measure, target: { atLeast: number } | { atMost: number }) => {
      const ra = runs[a]
      const rb = runs[b]
      if (!ra || !rb) return
      const each = ra.map((r, i) => (r[measure] ?? NaN) / (rb[i]![measure] ?? NaN))
      const show = (v: number) => (measure === 'requestsPerSecond' ? `${(v * 100).toFixed(1)} %` : `${v.toFixed(2)}×`)
      const want = 'atLeast' in target ? `≥ ${show(target.atLeast)}` : `≤ ${show(target.atMost)}`
      targets++
      if (each.some(Number.isNaN)) {
        failed = true
        log(`${label.padEnd(64)}     n/a   ${want.padEnd(9)} FAIL (PostgreSQL's processes cannot be read here)`)
        return
      }
      const value = median(each)
      const pass = 'atLeast' in target ? value >= target.atLeast : value <= target.atMost
      if (pass) passed++
      else failed = true
      log(`${label.padEnd(64)} ${show(value).padStart(8)}   ${want.padEnd(9)} ${pass ? 'PASS' : 'FAIL'}${each.length > 1 ? `   (rounds: ${each.map(show).join(', ')})` : ''}`)
    }
    log(`Targets (as shipped, 30 days of events, PostgreSQL; load average ${loadAverage()}):`)
    for (const [key, label] of [['rest', 'REST get_daily_ops 30d'], ['list', 'REST list_opportunities'], ['project', 'REST get_project']] as const) {
      ratio(`${label}: req/s of the reference's`, key, 'ref', 'requestsPerSecond', { atLeast: 0.5 })
      ratio(`${label}: server CPU per request, × the reference's`, key, 'ref', 'serverUs', { atMost: 2 })
      ratio(`${label}: PostgreSQL CPU per request, × the reference's`, key, 'ref', 'pgUs', { atMost: 3 })
    }
    for (const [key, rest, label] of [['mcp', 'rest', 'MCP get_daily_ops 2025-11-25'], ['mcp26', 'rest', 'MCP get_daily_ops 2026-07-28'],
      ['mcplist', 'list', 'MCP list_opportunities 2025-11-25'], ['mcplist26', 'list', 'MCP list_opportunities 2026-07-28']] as const) {
      ratio(`${label}: req/s of REST's`, key, rest, 'requestsPerSecond', { atLeast: 0.9 })
      ratio(`${label}: server CPU, × REST's`, key, rest, 'serverUs', { atMost: 1.1 })
    }
    ratio(`get_daily_ops PostgreSQL CPU, ${a.shards} shards × unsharded`, 'rest', 'flat', 'pgUs', { atMost: 1.2 })
    if (Object.values(runs).flat().some((r) => r.non2xx > 0 || r.errors > 0)) log('FAIL: some requests did not succeed (non-2xx or errors above)')
    log(`${passed} of ${targets} targets PASS; load average ${loadAverage()}${quick ? ' (--quick: a check of the bench, not a verdict)' : ''}`)

    if (soak > 0) {
      const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`
      const startRss = app.rss()
      log()
      log(`soak: ${soak} s of MCP tools/call at ${connections} connections — the app's RSS at start ${mb(startRss)}`)
      let left = soak
      let total = 0
      let bad = 0
      let slice = 0
      // Server CPU per request of each minute (six slices): a server whose cost grows as it runs
      // (postgres.js' pool queue unpatched: bench:drift) shows here as a rising figure.
      const perMinute: number[] = []
      let minuteCpu = app.cpuMs()
      let minuteRequests = 0
      while (left > 0) {
        const s = scenario(slice++ % 2 === 0 ? 'mcp26' : 'mcp')
        const d = Math.min(10, left)
        const r = await cannon({ ...s.task, connections, seconds: d })
        total += r.total
        minuteRequests += r.total
        bad += r.non2xx + r.errors
        left -= d
        if (slice % 6 === 0 || left === 0) {
          const cpu = app.cpuMs()
          perMinute.push(((cpu - minuteCpu) * 1000) / Math.max(1, minuteRequests))
          minuteCpu = cpu
          minuteRequests = 0
          log(`  after ${soak - left} s: RSS ${mb(app.rss())}, ${fmt(perMinute.at(-1)!, 0)} µs of server CPU a request since the last line`)
        }
      }
      const endRss = app.rss()
      log(`soak: ${total} requests (${fmt(total / soak, 0)} req/s), non-2xx or errors ${bad} — RSS at end ${mb(endRss)}, change ${((endRss / startRss - 1) * 100).toFixed(1)} %; ` +
        `server CPU a request, last line against the first: ${(perMinute.at(-1)! / perMinute[0]!).toFixed(2)}×`)
      if (bad > 0) failed = true
    }
    // autocannon stops with requests in flight: let them finish before the servers stop.
    await new Promise((resolve) => setTimeout(resolve, 1000))
  } catch (err) {
    failed = true
    reportFailure('bench:http', err)
    if (app) {
      const lines = fs.readFileSync(app.logFile, 'utf8').split('\n')
      const errors = lines.filter((l) => /"level":(50|60)/.test(l))
      if (!app.alive()) log(`the app exited; the end of its log:\n${lines.slice(-15).join('\n')}`)
      else if (errors.length) log(`the app logged ${errors.length} error(s); the first:\n${errors.slice(0, 2).join('\n').slice(0, 3000)}`)
    }
  } finally {
    await cleanup()
  }
  process.exit(failed ? 1 : 0)
}

/**
 * A project's counters folded into shard 0, as if one connection had written them all: each
 * shard counts what its connection saw first, so the sums are the figures (the read adds them up).
 */
async function foldShards(sql: postgres.Sql, project: string) {
  await sql.begin(async (tx) => {
    await tx`create temp table fold_counts on commit drop as
      select project_id, day, event, sum(events) as events, sum(unique_users) as unique_users from daily_event_counts where project_id = ${project} group by 1, 2, 3`
    await tx`delete from daily_event_counts where project_id = ${project}`
    await tx`insert into daily_event_counts (project_id, day, event, shard, events, unique_users) select project_id, day, event, 0, events, unique_users from fold_counts`
    await tx`create temp table fold_days on commit drop as
      select project_id, day, sum(users) as users from user_activity_days where project_id = ${project} group by 1, 2`
    await tx`delete from user_activity_days where project_id = ${project}`
    await tx`insert into user_activity_days (project_id, day, shard, users) select project_id, day, 0, users from fold_days`
    await tx`create temp table fold_stats on commit drop as
      select project_id, max(last_event_at) as last_event_at, sum(events) as events from project_event_stats where project_id = ${project} group by 1`
    await tx`delete from project_event_stats where project_id = ${project}`
    await tx`insert into project_event_stats (project_id, shard, last_event_at, events) select project_id, 0, last_event_at, events from fold_stats`
  })
}

function pgText(us: number | undefined): string {
  return us === undefined ? 'n/a' : fmt(us, 0)
}

function fmt(n: number, digits: number): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}
