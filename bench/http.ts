// npm run bench:http [-- --duration 10] [--connections 50] …
//
// The cost of the surfaces over HTTP, on the local PostgreSQL, against a yardstick measured in
// the same run on the same database. The yardstick ("reference") is a plain Fastify instance in
// this process, not the app, on a port of its own with a postgres.js pool of its own (10, like
// the app's): one primary-key lookup (`select … from projects where id = $1`) answered as a small
// JSON object. The app (buildApp + bootstrap, on a fresh database, with a bare route registered
// before ready) then serves, under autocannon: (1) the bare route (no database; kept as a second
// yardstick, no target), (2) get_daily_ops (30 days) over the tools REST API, (3)
// list_opportunities with two filters (status and type) over the tools REST API, on a few
// hundred seeded opportunities, (4) get_daily_ops over MCP at 2025-11-25 (stateless POST /mcp,
// JSON-RPC tools/call), (5) the same at 2026-07-28 (`_meta` envelope, Mcp-Method/Mcp-Name
// headers), (6) list_opportunities over MCP at 2025-11-25. Per scenario it prints requests/s,
// the server's CPU per request (this process: the app, or the reference while it is under
// load), PostgreSQL's CPU per request (the backends serving the bench database, from /proc) and
// the SQL statements one call sends (counted before the load: db/client.ts's `onQuery` for the
// app, postgres.js's `debug` hook for the reference). Targets: each REST tool call ≥ 50 % of the
// reference's requests/s, ≤ 2× its server CPU and ≤ 3× its PostgreSQL CPU per call; each MCP
// tools/call ≥ 90 % of the same tool's REST requests/s. `--soak <s>` then keeps MCP under load
// (both eras, alternating 10 s slices) and prints the server's RSS at start and end. The load
// generator runs in a child process of its own so that the server's event loop does only server
// work. `--rounds <n>` alternates the scenarios n times and compares each route's median, so
// that a ratio compares routes measured side by side on a machine whose load drifts;
// `--profile <prefix>` writes a CPU profile of the server per scenario and prints where its time
// goes. The database is dropped at the end; the exit code is 1 when a target is missed.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'
import { isDeepStrictEqual } from 'node:util'
import { writeFile } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import postgres from 'postgres'
import Fastify, { type FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { Client, freePort, loadAverage, median, numericOption } from './client-process.ts'
import type { CannonResult, CannonTask } from './client.ts'
import { checkDatabaseName, connectToServer, databaseUrl, dropDatabases, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const SCENARIOS = ['ref', 'bare', 'rest', 'list', 'mcp', 'mcp26', 'mcplist'] as const
type Key = (typeof SCENARIOS)[number]

const USAGE = `Usage: npm run bench:http -- [options]

  --duration <s>       seconds of measurement per scenario (default 10)
  --warmup <s>         seconds of unmeasured load before each scenario (default 2)
  --connections <n>    concurrent connections (default 50)
  --events <n>         events seeded through POST /v1/events (default 300)
  --opportunities <n>  opportunities seeded through POST /v1/tools/submit_opportunity, half of
                       them then reviewed (default 300)
  --only <list>        comma-separated scenarios to run (default all): ref (the reference: one
                       primary-key lookup with postgres.js behind a plain Fastify route), bare,
                       rest (get_daily_ops 30d), list (list_opportunities, status and type),
                       mcp, mcp26 (get_daily_ops over MCP, both eras), mcplist (list over MCP)
  --rounds <n>         run the chosen scenarios n times, alternating, and report each route's
                       median; each ratio is the median of the rounds' ratios, which compare
                       routes measured side by side (default 1; warm-up in the first round only)
  --calls <n>          sequential calls per scenario, before the load, to count the SQL
                       statements of one call (default 20)
  --show-sql           print the statements of one call of each scenario
  --profile <prefix>   CPU-profile the server during each scenario of the first round: writes
                       <prefix>.<scenario>.cpuprofile (open in Chrome DevTools) and prints the
                       functions and packages with the most self time (profiling slows every
                       route; take ratios from a run without it)
  --top <n>            how many functions --profile prints per scenario (default 25)
  --soak <s>           afterwards, MCP tools/call for this many seconds (both eras alternating),
                       printing the server's RSS at start and end (default 0: no soak)
  --db-name <name>     database name (default growthdesk_bench_http); server from BENCH_DATABASE_URL
                       (default postgres://postgres@127.0.0.1:5432/postgres). PostgreSQL's CPU is
                       read from /proc: it shows as n/a when the server runs on another machine
`

await main()

async function main() {
  const { values: args } = parseArgs({
    args: process.argv.slice(2),
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      events: { type: 'string', default: '300' },
      opportunities: { type: 'string', default: '300' },
      only: { type: 'string', default: SCENARIOS.join(',') },
      soak: { type: 'string', default: '0' },
      rounds: { type: 'string', default: '1' },
      calls: { type: 'string', default: '20' },
      'show-sql': { type: 'boolean', default: false },
      profile: { type: 'string' },
      top: { type: 'string', default: '25' },
      'db-name': { type: 'string', default: 'growthdesk_bench_http' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (args.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const num = numericOption(USAGE)
  const duration = num('duration', args.duration, 1, 600)
  const warmup = num('warmup', args.warmup, 0, 600)
  const connections = num('connections', args.connections, 1, 1000)
  const eventCount = num('events', args.events, 1, 1000)
  const opportunityCount = num('opportunities', args.opportunities, 12, 10_000)
  const soak = num('soak', args.soak, 0, 3600)
  const rounds = num('rounds', args.rounds, 1, 100)
  const calls = num('calls', args.calls, 1, 10_000)
  const top = num('top', args.top, 1, 1000)
  const profilePrefix = args.profile
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

  let app: FastifyInstance | undefined
  let reference: Reference | undefined
  let monitor: postgres.Sql | undefined
  const client = new Client()
  const cannon = (task: Omit<CannonTask, 'kind'>) => client.run<CannonResult>({ kind: 'autocannon', ...task })

  const cleanup = registerCleanup(async () => {
    client.close()
    await reference?.close().catch((err: unknown) => log(`closing the reference: ${String(err)}`))
    await app?.close().catch((err: unknown) => log(`closing the app: ${String(err)}`))
    await monitor?.end().catch(() => {})
    if (await dropDatabases([dbName])) log(`Dropped the database ${dbName}.`)
  })

  let failed = false
  try {
    const version = await serverVersion()
    await recreateDatabase(dbName)

    // The statements each side sends, recorded only while `counting` (before the load).
    let counting = false
    const sent: { app: string[]; ref: string[] } = { app: [], ref: [] }

    // PUBLIC_URL must name the address autocannon uses, or the MCP Host check refuses it.
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    app = await buildApp({
      config: {
        ...loadConfig({ HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_CONCURRENCY: '0' }),
        database: { kind: 'postgres', url: benchUrl, onQuery: (sql) => counting && sent.app.push(sql) },
      },
      logger: false,
    })
    // A route with nothing but Fastify in it, on the same app (same hooks).
    app.get('/bench/bare', async () => ({ ok: true }))
    const boot = await bootstrap(app, { workspace: 'growthdesk bench http', email: 'bench-http@growthdesk.bench', project: 'Bench project' })
    await app.listen({ host: '127.0.0.1', port })
    const refPort = await freePort()
    reference = await startReference(benchUrl, refPort, (sql) => counting && sent.ref.push(sql))
    // Connected to the server's default database, so that its own backend is not counted.
    monitor = connectToServer()
    const postgresCpu = postgresCpuMeter(monitor, dbName)

    log(`growthdesk bench:http — PostgreSQL ${version}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}`)
    log(`server ${origin}, reference http://127.0.0.1:${refPort} (database ${dbName}); autocannon in a child process, ${connections} connections, ${warmup} s warm-up + ${duration} s per scenario`)

    // A little data, through the ingestion endpoint like a real client.
    const now = Date.now()
    const events = Array.from({ length: eventCount }, (_, i) => ({
      event: i % 10 === 0 ? 'signup' : 'daily_use',
      distinct_id: `user_${i % 60}`,
      timestamp: new Date(now - (i % 7) * 86_400_000 - (i % 3600) * 1000).toISOString(),
    }))
    const ingest = await fetch(`${origin}/v1/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${boot.keys.ingest}`, 'content-type': 'application/json' },
      body: JSON.stringify({ events }),
    })
    if (ingest.status !== 200) throw new Error(`seeding events: ${ingest.status} ${await ingest.text()}`)
    log(`seeded: ${JSON.stringify(await ingest.json())}`)

    const auth = `Bearer ${boot.keys.service}`
    const project = boot.project.id
    const restHeaders = { authorization: auth, 'content-type': 'application/json' }
    const callTool = async (name: string, toolArgs: object) => {
      const res = await fetch(`${origin}/v1/tools/${name}`, { method: 'POST', headers: restHeaders, body: JSON.stringify({ project, ...toolArgs }) })
      const json = (await res.json()) as { result?: Record<string, unknown> }
      if (res.status !== 200 || !json.result) throw new Error(`${name}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`)
      return json.result
    }
    // Opportunities of three types through the tools API (10 at a time); every other one then
    // reviewed (alternately to `reviewing` and `done`), so that each filter leaves a part out.
    const types = ['partnership', 'potential_user_opportunity', 'content_channel']
    const submitted: string[] = []
    for (let i = 0; i < opportunityCount; i += 10) {
      const batch = Array.from({ length: Math.min(10, opportunityCount - i) }, (_, j) =>
        callTool('submit_opportunity', {
          contribution_type: types[(i + j) % types.length],
          key_information: `Lead ${i + j}: a team asking about the pricing page in the community forum`,
          reason: 'Asked twice this week, no answer yet',
          suggested_action: 'Reply in the thread and offer a call',
          source_url: `https://forum.example.com/t/${i + j}`,
        })
      )
      for (const result of await Promise.all(batch)) submitted.push(result.event_id as string)
    }
    for (let i = 1; i < submitted.length; i += 20) {
      await Promise.all(
        submitted.slice(i, i + 20).flatMap((eventId, j) => ((i + j) % 2 === 1 ? [callTool('review_opportunity', { event_id: eventId, status: (i + j) % 4 === 1 ? 'reviewing' : 'done' })] : []))
      )
    }
    log(`seeded: ${submitted.length} opportunities (${types.join(', ')}), every other one reviewed`)

    const dailyOpsArgs = { project, window: '30d' }
    const listArgs = { project, status: 'pending', type: 'potential_user_opportunity' }
    const mcpCall = (name: string, toolArgs: object, meta?: object) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: toolArgs, ...(meta ? { _meta: meta } : {}) } })
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const mcpHeaders = (version: string, extra: Record<string, string> = {}) => ({
      authorization: auth,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      ...extra,
    })
    interface Scenario {
      key: Key
      label: string
      task: Omit<CannonTask, 'kind' | 'connections' | 'seconds'>
    }
    const scenarios: Scenario[] = [
      {
        key: 'ref',
        label: 'reference: postgres.js by primary key',
        task: { url: `http://127.0.0.1:${refPort}/reference`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project }) },
      },
      { key: 'bare', label: 'GET /bench/bare', task: { url: `${origin}/bench/bare`, method: 'GET', headers: {} } },
      { key: 'rest', label: 'POST /v1/tools/get_daily_ops', task: { url: `${origin}/v1/tools/get_daily_ops`, method: 'POST', headers: restHeaders, body: JSON.stringify(dailyOpsArgs) } },
      { key: 'list', label: 'POST /v1/tools/list_opportunities', task: { url: `${origin}/v1/tools/list_opportunities`, method: 'POST', headers: restHeaders, body: JSON.stringify(listArgs) } },
      { key: 'mcp', label: 'POST /mcp tools/call get_daily_ops', task: { url: `${origin}/mcp`, method: 'POST', headers: mcpHeaders('2025-11-25'), body: mcpCall('get_daily_ops', dailyOpsArgs) } },
      {
        key: 'mcp26',
        label: 'POST /mcp get_daily_ops (2026-07-28)',
        task: {
          url: `${origin}/mcp`,
          method: 'POST',
          headers: mcpHeaders('2026-07-28', { 'mcp-method': 'tools/call', 'mcp-name': 'get_daily_ops' }),
          body: mcpCall('get_daily_ops', dailyOpsArgs, meta),
        },
      },
      { key: 'mcplist', label: 'POST /mcp tools/call list_opportunities', task: { url: `${origin}/mcp`, method: 'POST', headers: mcpHeaders('2025-11-25'), body: mcpCall('list_opportunities', listArgs) } },
    ]
    const scenario = (key: Key) => scenarios.find((s) => s.key === key)!
    const send = (s: Scenario) => fetch(s.task.url, { method: s.task.method, headers: s.task.headers, body: s.task.body })

    // Once, before any load: every call succeeds, and MCP answers what REST answers, so the
    // benchmark measures real answers.
    const dailyOps = await callTool('get_daily_ops', dailyOpsArgs)
    if ((dailyOps.days as unknown[] | undefined)?.length !== 30) throw new Error(`REST check: get_daily_ops 30d answered ${JSON.stringify(dailyOps).slice(0, 500)}`)
    const page = await callTool('list_opportunities', listArgs)
    const total = page.total as number
    if (!(total >= 1) || (page.items as unknown[]).length !== Math.min(20, total)) throw new Error(`REST check: list_opportunities answered ${JSON.stringify(page).slice(0, 500)}`)
    for (const [key, expected] of [['mcp', dailyOps], ['mcp26', dailyOps], ['mcplist', page]] as const) {
      const s = scenario(key)
      const res = await send(s)
      const json = (await res.json()) as { result?: { isError?: boolean; structuredContent?: unknown }; error?: unknown }
      if (res.status !== 200 || !json.result || json.result.isError || !isDeepStrictEqual(json.result.structuredContent, expected)) {
        throw new Error(`MCP check (${s.label}): ${res.status} ${JSON.stringify(json).slice(0, 1000)}`)
      }
    }
    const refCheck = await send(scenario('ref'))
    const refJson = (await refCheck.json()) as { id?: string }
    if (refCheck.status !== 200 || refJson.id !== project) throw new Error(`reference check: ${refCheck.status} ${JSON.stringify(refJson)}`)
    log(
      'checked: REST and MCP (2025-11-25 and 2026-07-28) answer get_daily_ops (30 days) with the same result; REST and MCP answer ' +
        `list_opportunities (${JSON.stringify(listArgs).replace(/"project":"[^"]+",/, '')}) alike: a page of ${(page.items as unknown[]).length} of ${page.total}; the reference finds the project`
    )

    const chosen = scenarios.filter((s) => only.has(s.key))
    // Statements per call: `calls` sequential calls of each scenario, after one unrecorded call
    // (what a process caches on its first call is not a call's cost). The app's count includes
    // whatever else it sends meanwhile: the fair-use sync (at most one statement per 100 ms) is
    // a real, amortized cost of its calls.
    const statementsPerCall: Partial<Record<Key, number>> = {}
    for (const s of chosen) {
      const call = async () => {
        const res = await send(s)
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`${s.label}: ${res.status}`)
      }
      await call()
      await sleep(50) // a key's last-use write (not awaited by the call) lands before counting
      const recorded = s.key === 'ref' ? sent.ref : sent.app
      recorded.length = 0
      counting = true
      await call()
      const one = recorded.slice()
      for (let i = 1; i < calls; i++) await call()
      await sleep(50) // and what a call sends after it answered is counted too
      counting = false
      statementsPerCall[s.key] = recorded.length / calls
      if (args['show-sql']) log(`${s.label}: ${one.length} statement(s) in one call\n${one.map((sql) => `  ${sql.replace(/\s+/g, ' ').slice(0, 200)}`).join('\n')}`)
    }
    log(`statements per call (${calls} sequential calls each): ${chosen.map((s) => `${s.key} ${fmt(statementsPerCall[s.key]!, 2)}`).join(', ')}`)
    log()

    interface Measured extends CannonResult {
      /** Server CPU (user + system) per request, in µs. */
      cpuPerRequest: number
      /** PostgreSQL's CPU (the bench database's backends) per request, in µs; undefined when not readable. */
      pgCpuPerRequest: number | undefined
    }
    const runs: Partial<Record<Key, Measured[]>> = {}
    const pgText = (us: number | undefined) => (us === undefined ? 'n/a' : fmt(us, 0))
    for (let round = 1; round <= rounds; round++) {
      if (rounds > 1) log(`round ${round} of ${rounds} (load average ${loadAverage()})`)
      // Each round starts one route later, so that no route always runs first (after the
      // warm-up) or always follows the same one.
      const order = chosen.map((_, i) => chosen[(i + round - 1) % chosen.length]!)
      for (const s of order) {
        const task = { ...s.task, connections }
        if (warmup > 0 && round === 1) await cannon({ ...task, seconds: warmup })
        const profiling = profilePrefix !== undefined && round === 1 ? await startProfile() : undefined
        // The server's own CPU time per request: steadier than requests/s on a shared machine.
        const pgBefore = await postgresCpu.read()
        const cpuBefore = process.cpuUsage()
        const r = await cannon({ ...task, seconds: duration })
        const cpu = process.cpuUsage(cpuBefore)
        const pgUsed = postgresCpu.since(pgBefore, await postgresCpu.read())
        const requests = Math.max(1, r.total)
        const m: Measured = { ...r, cpuPerRequest: (cpu.user + cpu.system) / requests, pgCpuPerRequest: pgUsed === undefined ? undefined : pgUsed / requests }
        ;(runs[s.key] ??= []).push(m)
        log(
          `${s.label.padEnd(40)} ${fmt(r.requestsPerSecond, 0).padStart(8)} req/s   p50 ${fmt(r.p50, 1).padStart(6)} ms   p99 ${fmt(r.p99, 1).padStart(6)} ms   ` +
            `non-2xx ${r.non2xx}   errors ${r.errors}   timeouts ${r.timeouts}   (${r.total} requests, ` +
            `server CPU ${fmt(m.cpuPerRequest, 0)} µs/request, PostgreSQL CPU ${pgText(m.pgCpuPerRequest)} µs/request)`
        )
        if (r.non2xx > 0 || r.errors > 0) failed = true
        if (profiling) {
          const file = `${profilePrefix}.${s.key}.cpuprofile`
          const profile = await profiling.stop()
          await writeFile(file, JSON.stringify(profile))
          log(describeProfile(profile, top, r.total, file))
        }
      }
    }
    // One figure per route: the median of its rounds (each measure separately).
    const medianOf = (list: (number | undefined)[]) => (list.some((v) => v === undefined) ? undefined : median(list as number[]))
    const results: Partial<Record<Key, Measured>> = {}
    for (const [key, list] of Object.entries(runs) as [Key, Measured[]][]) {
      results[key] = {
        ...list[0]!,
        requestsPerSecond: median(list.map((r) => r.requestsPerSecond)),
        cpuPerRequest: median(list.map((r) => r.cpuPerRequest)),
        pgCpuPerRequest: medianOf(list.map((r) => r.pgCpuPerRequest)),
        p99: median(list.map((r) => r.p99)),
      }
    }
    log()
    log(rounds > 1 ? `medians of ${rounds} rounds:` : 'summary:')
    for (const s of chosen) {
      const r = results[s.key]!
      log(
        `${s.label.padEnd(40)} ${fmt(r.requestsPerSecond, 0).padStart(8)} req/s   p99 ${fmt(r.p99, 1).padStart(6)} ms   server CPU ${fmt(r.cpuPerRequest, 0).padStart(5)} µs/request   ` +
          `PostgreSQL CPU ${pgText(r.pgCpuPerRequest).padStart(5)} µs/request   ${fmt(statementsPerCall[s.key]!, 2)} statements/call`
      )
    }
    log()
    // A ratio compares two routes measured one after the other, in the same round: with several
    // rounds, the median of the rounds' ratios (each round's listed, so their spread shows).
    // `at least` targets are floors (throughput), `at most` ones ceilings (CPU); none: shown only.
    type Measure = 'requestsPerSecond' | 'cpuPerRequest' | 'pgCpuPerRequest'
    const ratio = (label: string, a: Key, b: Key, measure: Measure, target?: { atLeast: number } | { atMost: number }) => {
      const ra = runs[a]
      const rb = runs[b]
      if (!ra || !rb) return
      const each = ra.map((r, i) => (r[measure] ?? NaN) / (rb[i]![measure] ?? NaN))
      const rounds = each.length > 1 ? `   (rounds: ${each.map((v) => show(v)).join(', ')})` : ''
      if (each.some(Number.isNaN)) {
        log(`${label.padEnd(42)}     n/a   (PostgreSQL's processes cannot be read here)`)
        return
      }
      const value = median(each)
      let verdict = 'no target'
      if (target) {
        const pass = 'atLeast' in target ? value >= target.atLeast : value <= target.atMost
        if (!pass) failed = true
        verdict = `target ${'atLeast' in target ? `≥ ${show(target.atLeast)}` : `≤ ${show(target.atMost)}`}   ${pass ? 'PASS' : 'FAIL'}`
      }
      log(`${label.padEnd(42)} ${show(value).padStart(7)}   ${verdict}${rounds}`)
      function show(v: number) {
        return measure === 'requestsPerSecond' ? `${(v * 100).toFixed(1)} %` : `${v.toFixed(2)}×`
      }
    }
    for (const [key, tool] of [['rest', 'get_daily_ops'], ['list', 'list_opportunities']] as const) {
      ratio(`REST ${tool} / reference req/s`, key, 'ref', 'requestsPerSecond', { atLeast: 0.5 })
      ratio('  server CPU per call', key, 'ref', 'cpuPerRequest', { atMost: 2 })
      ratio('  PostgreSQL CPU per call', key, 'ref', 'pgCpuPerRequest', { atMost: 3 })
    }
    ratio('MCP 2025 get_daily_ops / REST', 'mcp', 'rest', 'requestsPerSecond', { atLeast: 0.9 })
    ratio('MCP 2026 get_daily_ops / REST', 'mcp26', 'rest', 'requestsPerSecond', { atLeast: 0.9 })
    ratio('MCP 2025 list_opportunities / REST', 'mcplist', 'list', 'requestsPerSecond', { atLeast: 0.9 })
    ratio('REST get_daily_ops / bare', 'rest', 'bare', 'requestsPerSecond')
    if (Object.values(runs).flat().some((r) => r.non2xx > 0 || r.errors > 0)) log('FAIL: some requests did not succeed (non-2xx or errors above)')
    log(`load average after: ${loadAverage()} (other work on the machine skews every figure)`)

    if (soak > 0) {
      // The soak: MCP under load for `soak` seconds, both eras in alternating 10 s slices; RSS
      // is the server process's (the load generator is another process).
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`
      const mem = () => process.memoryUsage()
      log()
      const start = mem()
      // Where the memory is: V8's heap (used, and reserved), and memory outside it (Buffers).
      const parts = (m: NodeJS.MemoryUsage) => `heap used ${mb(m.heapUsed)} of ${mb(m.heapTotal)}, external ${mb(m.external)}`
      log(`soak: ${soak} s of MCP tools/call at ${connections} connections — RSS at start ${mb(start.rss)} (${parts(start)})`)
      let left = soak
      let total = 0
      let bad = 0
      let slice = 0
      while (left > 0) {
        const s = scenario(slice++ % 2 === 0 ? 'mcp26' : 'mcp')
        const d = Math.min(10, left)
        const r = await cannon({ ...s.task, connections, seconds: d })
        total += r.total
        bad += r.non2xx + r.errors
        left -= d
        if (slice % 6 === 0) {
          const m = mem()
          log(`  after ${soak - left} s: RSS ${mb(m.rss)} (${parts(m)})`)
        }
      }
      const end = mem()
      log(`soak: ${total} requests (${fmt(total / soak, 0)} req/s), non-2xx or errors ${bad} — RSS at end ${mb(end.rss)} (${parts(end)}), change ${((end.rss / start.rss - 1) * 100).toFixed(1)} %`)
      if (bad > 0) failed = true
    }
    // autocannon stops with requests still in flight, and their handlers run on. Let them finish
    // before the app closes and the database is dropped: a pool connection still starting up when
    // the drop cuts it fails postgres.js's internal type fetch, an unhandled rejection that ends
    // the process (porsager/postgres#1192, #1223).
    const worstP99 = Math.max(0, ...Object.values(results).map((r) => r.p99))
    await new Promise((resolve) => setTimeout(resolve, Math.min(10_000, Math.max(500, 2 * worstP99))))
  } catch (err) {
    failed = true
    reportFailure('bench:http', err)
  } finally {
    await cleanup()
  }
  process.exit(failed ? 1 : 0)
}

interface Reference {
  close(): Promise<void>
}

/**
 * The yardstick: a plain Fastify instance (no hooks, no plugins) with a postgres.js pool of its
 * own, sized like the app's (10), answering POST /reference {project} with one primary-key
 * lookup of the project as a small JSON object (a body schema and a response schema, like the
 * app's routes). `onStatement` hears every statement the pool sends (postgres.js's `debug`).
 * The lookup is a tagged query, so postgres.js prepares it once per connection (its default);
 * drizzle sends its queries through `unsafe` unnamed, parsed and planned on every call (an
 * unprepared primary-key lookup measured ~4× the PostgreSQL CPU of the prepared one here).
 */
async function startReference(url: string, port: number, onStatement: (sql: string) => void): Promise<Reference> {
  const sql = postgres(url, { max: 10, onnotice: () => {}, connection: { application_name: 'growthdesk-bench-reference' }, debug: (_connection, query) => onStatement(query) })
  const server = Fastify({ logger: false })
  const Project = { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' }, timezone: { type: 'string' } }, required: ['id', 'name', 'timezone'] }
  server.post<{ Body: { project: string } }>(
    '/reference',
    {
      schema: {
        body: { type: 'object', properties: { project: { type: 'string', minLength: 1 } }, required: ['project'], additionalProperties: false },
        response: { 200: Project, 404: { type: 'object', properties: { error: { type: 'string' } } } },
      },
    },
    async (request, reply) => {
      const [row] = await sql`select id, name, timezone from projects where id = ${request.body.project}`
      return row ?? reply.code(404).send({ error: 'not_found' })
    }
  )
  await server.listen({ host: '127.0.0.1', port })
  return {
    async close() {
      await server.close()
      await sql.end({ timeout: 5 })
    },
  }
}

/**
 * PostgreSQL's CPU time spent for the bench: utime + stime (/proc/<pid>/stat, in clock ticks)
 * of the client backends connected to the bench database, i.e. the app's pool and the
 * reference's. Only those: summing every postgres process would add the checkpointer, WAL writer,
 * autovacuum and other databases' sessions, background noise that is no request's cost and
 * would blur a ratio of two small figures. The pools are warm, so the pids are stable; the list
 * is read again after each scenario, and a backend that appeared meanwhile counts from zero. A
 * pid whose process is not named postgres (PostgreSQL on another machine) is not read: then
 * there is no figure.
 */
function postgresCpuMeter(monitor: postgres.Sql, dbName: string) {
  let ticksPerSecond = 100
  try {
    ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    // getconf missing: Linux's USER_HZ is 100 nearly everywhere.
  }
  const cpu = (pid: number): number | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const close = stat.lastIndexOf(')')
      if (stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') return undefined
      // After "pid (comm) " come fields 3 (state) onwards: utime is field 14, stime 15.
      const fields = stat.slice(close + 2).split(' ')
      return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
    } catch {
      return undefined
    }
  }
  return {
    /** CPU µs per backend pid, now. */
    async read(): Promise<Map<number, number>> {
      const rows = await monitor<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${dbName} and backend_type = 'client backend'`
      const usage = new Map<number, number>()
      for (const { pid } of rows) {
        const us = cpu(pid)
        if (us !== undefined) usage.set(pid, us)
      }
      return usage
    },
    /** CPU µs used between two readings (undefined when neither could read a backend). */
    since(before: Map<number, number>, after: Map<number, number>): number | undefined {
      if (before.size === 0 && after.size === 0) return undefined
      let used = 0
      for (const [pid, us] of after) used += us - (before.get(pid) ?? 0)
      // A backend gone since (a pool that dropped a connection) took its last figures with it.
      return used
    },
  }
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[]
  samples: number[]
  timeDeltas: number[]
  startTime: number
  endTime: number
}

/** A CPU profile of this (the server's) process, started now. */
async function startProfile(): Promise<{ stop(): Promise<CpuProfile> }> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: 200 })
  await session.post('Profiler.start')
  return {
    async stop() {
      const { profile } = await session.post('Profiler.stop')
      session.disconnect()
      return profile as unknown as CpuProfile
    },
  }
}

/** The functions and the packages (or app folders) with the most self time, per request. */
function describeProfile(profile: CpuProfile, top: number, requests: number, file: string): string {
  const self = new Map<number, number>()
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
  const total = profile.endTime - profile.startTime
  const byFunction = new Map<string, number>()
  const byPackage = new Map<string, number>()
  const root = new URL('..', import.meta.url).href
  for (const node of profile.nodes) {
    const t = self.get(node.id) ?? 0
    if (t === 0) continue
    const { functionName, url, lineNumber } = node.callFrame
    const where = url.startsWith(root) ? url.slice(root.length) : url
    const key = `${functionName || '(anonymous)'}  ${where ? `${where}:${lineNumber + 1}` : ''}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + t)
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(where)?.[1] ??
      (where.startsWith('node:') ? 'node: (built-in)' : where === '' ? functionName || '(native)' : where.split('/').slice(0, where.includes('/') ? 1 : 0).join('/') || where)
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + t)
  }
  const perRequest = (us: number) => `${fmt(us / Math.max(1, requests), 1).padStart(7)} µs/req`
  const share = (us: number) => `${((us / Math.max(1, total)) * 100).toFixed(1).padStart(5)} %`
  const lines = [`  profile ${file}: ${fmt(total / 1000, 0)} ms, ${requests} requests; top self time:`]
  for (const [k, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) lines.push(`    ${share(t)} ${perRequest(t)}  ${k}`)
  lines.push('  by package / folder:')
  for (const [k, t] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, 15)) lines.push(`    ${share(t)} ${perRequest(t)}  ${k}`)
  return lines.join('\n')
}

function fmt(n: number, digits: number): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}
