// npm run bench:http [-- --duration 10] [--connections 50] …
//
// The cost of the surfaces over HTTP, on the local PostgreSQL: one app (buildApp + bootstrap)
// on a fresh database, with one extra bare route registered before ready, and autocannon
// against (1) the bare route, (2) get_daily_ops over the tools REST API, (3) the same call
// over MCP at 2025-11-25 (stateless POST /mcp, JSON-RPC tools/call), (4) the same call over MCP
// at 2026-07-28 (`_meta` envelope, Mcp-Method/Mcp-Name headers). Targets: each MCP era ≥ 80 %
// of REST's requests/s, REST ≥ 50 % of the bare route's. `--soak <s>` then keeps MCP under load
// (both eras, alternating 10 s slices) and prints the server's RSS at start and end. The load generator runs in a child process of
// its own so that the server's event loop does only server work. `--rounds <n>` alternates the
// scenarios n times and compares each route's median, so that a ratio compares routes measured
// side by side on a machine whose load drifts; `--profile <prefix>` writes a CPU profile of the
// server per scenario and prints where its time goes. The database is dropped at the end; the
// exit code is 1 when a target is missed.
import { fork } from 'node:child_process'
import { parseArgs } from 'node:util'
import { isDeepStrictEqual } from 'node:util'
import { writeFile } from 'node:fs/promises'
import { Session } from 'node:inspector/promises'
import net from 'node:net'
import os from 'node:os'
import postgres from 'postgres'
import type { FastifyInstance } from 'fastify'
import autocannon from 'autocannon'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../core/admin.ts'
import { median } from './client-process.ts'

const USAGE = `Usage: npm run bench:http -- [options]

  --duration <s>       seconds of measurement per scenario (default 10)
  --warmup <s>         seconds of unmeasured load before each scenario (default 2)
  --connections <n>    concurrent connections (default 50)
  --events <n>         events seeded through POST /v1/events (default 300)
  --only <list>        comma-separated scenarios to run: bare, rest, mcp, mcp26 (default all)
  --rounds <n>         run the chosen scenarios n times, alternating, and report each route's
                       median; each ratio is the median of the rounds' ratios, which compare
                       routes measured side by side (default 1; warm-up in the first round only)
  --profile <prefix>   CPU-profile the server during each scenario of the first round: writes
                       <prefix>.<scenario>.cpuprofile (open in Chrome DevTools) and prints the
                       functions and packages with the most self time (profiling slows every
                       route; take ratios from a run without it)
  --top <n>            how many functions --profile prints per scenario (default 25)
  --soak <s>           afterwards, MCP tools/call for this many seconds (both eras alternating),
                       printing the server's RSS at start and end (default 0: no soak)
  --db-name <name>     database name (default growthdesk_bench_http); server from BENCH_DATABASE_URL
                       (default postgres://postgres@127.0.0.1:5432/postgres)
`

// ---------------------------------------------------------------------------------------------
// The load-generating child: one autocannon run per message.

interface CannonTask {
  url: string
  method: 'GET' | 'POST'
  headers: Record<string, string>
  body?: string
  connections: number
  duration: number
}
interface CannonResult {
  requestsPerSecond: number
  total: number
  p50: number
  p99: number
  max: number
  non2xx: number
  errors: number
  timeouts: number
}
type Reply = { ok: true; result: CannonResult } | { ok: false; error: string }

if (process.argv.includes('--load-client')) {
  process.on('message', (task: CannonTask) => {
    autocannon({ url: task.url, method: task.method, headers: task.headers, body: task.body, connections: task.connections, duration: task.duration }).then(
      (r) =>
        process.send!({
          ok: true,
          result: {
            requestsPerSecond: r.requests.average,
            total: r.requests.total ?? 0,
            p50: r.latency.p50,
            p99: r.latency.p99,
            max: r.latency.max,
            non2xx: r.non2xx,
            errors: r.errors,
            timeouts: r.timeouts,
          },
        } satisfies Reply),
      (err: unknown) => process.send!({ ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) } satisfies Reply)
    )
  })
  process.on('disconnect', () => process.exit(0))
} else {
  await main()
}

// ---------------------------------------------------------------------------------------------
// The server side.

async function main() {
  const { values: args } = parseArgs({
    args: process.argv.slice(2),
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      events: { type: 'string', default: '300' },
      only: { type: 'string', default: 'bare,rest,mcp,mcp26' },
      soak: { type: 'string', default: '0' },
      rounds: { type: 'string', default: '1' },
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
  const num = (name: string, value: string | undefined, min: number, max: number): number => {
    const n = Number(value)
    if (!Number.isFinite(n) || n < min || n > max) {
      process.stderr.write(`--${name} must be a number from ${min} to ${max} (got ${JSON.stringify(value)}).\n\n${USAGE}`)
      process.exit(2)
    }
    return n
  }
  const duration = num('duration', args.duration, 1, 600)
  const warmup = num('warmup', args.warmup, 0, 600)
  const connections = num('connections', args.connections, 1, 1000)
  const eventCount = num('events', args.events, 1, 1000)
  const soak = num('soak', args.soak, 0, 3600)
  const rounds = num('rounds', args.rounds, 1, 100)
  const top = num('top', args.top, 1, 1000)
  const profilePrefix = args.profile
  const only = new Set(args.only!.split(',').map((s) => s.trim()))
  for (const s of only) {
    if (!['bare', 'rest', 'mcp', 'mcp26'].includes(s)) {
      process.stderr.write(`--only takes bare, rest, mcp and/or mcp26 (got ${JSON.stringify(s)}).\n`)
      process.exit(2)
    }
  }
  const dbName = args['db-name']!
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(dbName)) {
    process.stderr.write(`--db-name must be a lower-case SQL identifier (got ${JSON.stringify(dbName)}).\n`)
    process.exit(2)
  }

  const log = (line = '') => process.stdout.write(`${line}\n`)
  const quiet = { onnotice: () => {} }
  const baseUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'
  const benchUrl = new URL(baseUrl)
  benchUrl.pathname = `/${dbName}`

  let app: FastifyInstance | undefined
  const child = fork(new URL(import.meta.url).pathname, ['--load-client'], { execArgv: process.execArgv, stdio: 'inherit' })
  const cannon = (task: CannonTask) =>
    new Promise<CannonResult>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the load client exited (${code})`))
      child.once('exit', onExit)
      child.once('message', (reply: Reply) => {
        child.off('exit', onExit)
        if (reply.ok) resolve(reply.result)
        else reject(new Error(`load client: ${reply.error}`))
      })
      child.send(task)
    })

  let cleaned: Promise<void> | undefined
  const cleanup = () =>
    (cleaned ??= (async () => {
      if (child.connected) child.disconnect()
      if (child.exitCode === null) child.kill()
      await app?.close().catch((err: unknown) => log(`closing the app: ${String(err)}`))
      const admin = postgres(baseUrl, { max: 1, ...quiet })
      try {
        await admin.unsafe(`drop database if exists ${dbName} with (force)`)
        log(`Dropped the database ${dbName}.`)
      } catch (err) {
        log(`Could not drop the database ${dbName}: ${String(err)}`)
      } finally {
        await admin.end().catch(() => {})
      }
    })())
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      log(`\n${signal}: cleaning up…`)
      void cleanup().finally(() => process.exit(130))
    })
  }

  let failed = false
  try {
    const admin = postgres(baseUrl, { max: 1, ...quiet })
    const [{ version }] = (await admin`select current_setting('server_version') as version`) as unknown as [{ version: string }]
    await admin.unsafe(`drop database if exists ${dbName} with (force)`)
    await admin.unsafe(`create database ${dbName}`)
    await admin.end()

    // PUBLIC_URL must name the address autocannon uses, or the MCP Host check refuses it.
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    app = await buildApp({
      config: {
        ...loadConfig({ HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_CONCURRENCY: '0' }),
        database: { kind: 'postgres', url: benchUrl.toString() },
      },
      logger: false,
    })
    // The yardstick: a route with nothing but Fastify in it, on the same app (same hooks).
    app.get('/bench/bare', async () => ({ ok: true }))
    const boot = await bootstrap(app, { workspace: 'growthdesk bench http', email: 'bench-http@growthdesk.bench', project: 'Bench project' })
    await app.listen({ host: '127.0.0.1', port })

    log(`growthdesk bench:http — PostgreSQL ${version}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}`)
    log(`server ${origin} (database ${dbName}); autocannon in a child process, ${connections} connections, ${warmup} s warm-up + ${duration} s per scenario`)

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
    const restBody = JSON.stringify({ project: boot.project.id })
    const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_daily_ops', arguments: { project: boot.project.id } } })
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
    const mcp26Body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_daily_ops', arguments: { project: boot.project.id }, _meta: meta } })
    const mcpHeaders = (version: string, extra: Record<string, string> = {}) => ({
      authorization: auth,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': version,
      ...extra,
    })
    const scenarios = [
      { key: 'bare', label: 'GET /bench/bare', task: { url: `${origin}/bench/bare`, method: 'GET', headers: {} } },
      {
        key: 'rest',
        label: 'POST /v1/tools/get_daily_ops',
        task: { url: `${origin}/v1/tools/get_daily_ops`, method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: restBody },
      },
      {
        key: 'mcp',
        label: 'POST /mcp tools/call get_daily_ops',
        task: {
          url: `${origin}/mcp`,
          method: 'POST',
          headers: mcpHeaders('2025-11-25'),
          body: mcpBody,
        },
      },
      {
        key: 'mcp26',
        label: 'POST /mcp tools/call (2026-07-28)',
        task: {
          url: `${origin}/mcp`,
          method: 'POST',
          headers: mcpHeaders('2026-07-28', { 'mcp-method': 'tools/call', 'mcp-name': 'get_daily_ops' }),
          body: mcp26Body,
        },
      },
    ] as const

    // Once, before any load: both calls succeed and agree, so the benchmark measures real answers.
    const restCheck = await fetch(scenarios[1].task.url, { method: 'POST', headers: scenarios[1].task.headers, body: restBody })
    const restJson = (await restCheck.json()) as { result?: { days?: unknown[] } }
    if (restCheck.status !== 200 || !restJson.result?.days?.length) throw new Error(`REST check: ${restCheck.status} ${JSON.stringify(restJson)}`)
    for (const s of [scenarios[2], scenarios[3]]) {
      const mcpCheck = await fetch(s.task.url, { method: 'POST', headers: s.task.headers, body: s.task.body })
      const mcpJson = (await mcpCheck.json()) as { result?: { isError?: boolean; structuredContent?: unknown }; error?: unknown }
      if (mcpCheck.status !== 200 || !mcpJson.result || mcpJson.result.isError || !isDeepStrictEqual(mcpJson.result.structuredContent, restJson.result)) {
        throw new Error(`MCP check (${s.label}): ${mcpCheck.status} ${JSON.stringify(mcpJson).slice(0, 1000)}`)
      }
    }
    log('checked: REST and MCP (2025-11-25 and 2026-07-28) answer get_daily_ops successfully, with the same result')
    log()

    type Key = 'bare' | 'rest' | 'mcp' | 'mcp26'
    interface Measured extends CannonResult {
      /** Server CPU (user + system) per request, in µs. */
      cpuPerRequest: number
    }
    const runs: Partial<Record<Key, Measured[]>> = {}
    const chosen = scenarios.filter((s) => only.has(s.key))
    for (let round = 1; round <= rounds; round++) {
      if (rounds > 1) log(`round ${round} of ${rounds} (load average ${loadAverage()})`)
      // Each round starts one route later, so that no route always runs first (after the
      // warm-up) or always follows the same one.
      const order = chosen.map((_, i) => chosen[(i + round - 1) % chosen.length]!)
      for (const s of order) {
        const task = { ...s.task, connections } as CannonTask
        if (warmup > 0 && round === 1) await cannon({ ...task, duration: warmup })
        const profiling = profilePrefix !== undefined && round === 1 ? await startProfile() : undefined
        // The server's own CPU time per request: steadier than requests/s on a shared machine.
        const cpuBefore = process.cpuUsage()
        const r = await cannon({ ...task, duration })
        const cpu = process.cpuUsage(cpuBefore)
        const m: Measured = { ...r, cpuPerRequest: (cpu.user + cpu.system) / Math.max(1, r.total) }
        ;(runs[s.key] ??= []).push(m)
        log(
          `${s.label.padEnd(36)} ${fmt(r.requestsPerSecond, 0).padStart(8)} req/s   p50 ${fmt(r.p50, 1).padStart(6)} ms   p99 ${fmt(r.p99, 1).padStart(6)} ms   ` +
            `non-2xx ${r.non2xx}   errors ${r.errors}   timeouts ${r.timeouts}   (${r.total} requests, ` +
            `server CPU ${fmt(m.cpuPerRequest, 0)} µs/request)`
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
    // One figure per route: the median of its rounds (requests/s and CPU per request separately).
    const results: Partial<Record<Key, Measured>> = {}
    for (const [key, list] of Object.entries(runs) as [Key, Measured[]][]) {
      results[key] = { ...list[0]!, requestsPerSecond: median(list.map((r) => r.requestsPerSecond)), cpuPerRequest: median(list.map((r) => r.cpuPerRequest)), p99: median(list.map((r) => r.p99)) }
    }
    if (rounds > 1) {
      log()
      log(`medians of ${rounds} rounds:`)
      for (const s of chosen) {
        const r = results[s.key]!
        log(`${s.label.padEnd(36)} ${fmt(r.requestsPerSecond, 0).padStart(8)} req/s   p99 ${fmt(r.p99, 1).padStart(6)} ms   server CPU ${fmt(r.cpuPerRequest, 0)} µs/request`)
      }
    }
    log()
    // A ratio compares two routes measured one after the other, in the same round: with several
    // rounds, the median of the rounds' ratios (each round's listed, so their spread shows).
    const ratio = (label: string, a: Key, b: Key, target: number) => {
      const ra = runs[a]
      const rb = runs[b]
      if (!ra || !rb) return
      const each = ra.map((r, i) => r.requestsPerSecond / rb[i]!.requestsPerSecond)
      const value = median(each)
      const pass = value >= target
      if (!pass) failed = true
      const rounds = each.length > 1 ? `   (rounds: ${each.map((v) => `${(v * 100).toFixed(1)} %`).join(', ')})` : ''
      log(`${label.padEnd(16)} ${(value * 100).toFixed(1).padStart(5)} %   target ≥ ${(target * 100).toFixed(0)} %   ${pass ? 'PASS' : 'FAIL'}${rounds}`)
    }
    ratio('MCP 2025 / REST', 'mcp', 'rest', 0.8)
    ratio('MCP 2026 / REST', 'mcp26', 'rest', 0.8)
    ratio('REST / bare', 'rest', 'bare', 0.5)
    if (Object.values(runs).flat().some((r) => r.non2xx > 0 || r.errors > 0)) log('FAIL: some requests did not succeed (non-2xx or errors above)')
    log(`load average after: ${loadAverage()} (other work on the machine skews every figure)`)

    if (soak > 0) {
      // The soak: MCP under load for `soak` seconds, both eras in alternating 10 s slices; RSS
      // is the server process's (the load generator is another process).
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`
      const mem = () => process.memoryUsage()
      log()
      const start = mem()
      log(`soak: ${soak} s of MCP tools/call at ${connections} connections — RSS at start ${mb(start.rss)} (heap used ${mb(start.heapUsed)})`)
      let left = soak
      let total = 0
      let bad = 0
      let slice = 0
      while (left > 0) {
        const s = slice++ % 2 === 0 ? scenarios[3] : scenarios[2]
        const d = Math.min(10, left)
        const r = await cannon({ ...(s.task as unknown as CannonTask), connections, duration: d })
        total += r.total
        bad += r.non2xx + r.errors
        left -= d
        if (slice % 6 === 0) log(`  after ${soak - left} s: RSS ${mb(mem().rss)}`)
      }
      const end = mem()
      log(`soak: ${total} requests (${fmt(total / soak, 0)} req/s), non-2xx or errors ${bad} — RSS at end ${mb(end.rss)} (heap used ${mb(end.heapUsed)}), change ${((end.rss / start.rss - 1) * 100).toFixed(1)} %`)
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
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`)
  } finally {
    await cleanup()
  }
  process.exit(failed ? 1 : 0)
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

function loadAverage(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ')
}

/** A free loopback port (briefly bound, then released). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo
      srv.close(() => resolve(port))
    })
  })
}
