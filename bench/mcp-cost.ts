// npm run bench:mcp-cost [-- --variant semi=4 --variant semi=16 …] [--only rest,mcp,mcp26] …
//
// What a tool call costs the server as `npm start` runs it: each variant is a server started
// with package.json's start command (its Node flags, start.js, its default LOG_LEVEL of info and
// its log lines written to a pipe), on a fresh database of its own, first-started so that it
// creates its own keys. The variants differ by what is named: `semi=<MB>` replaces
// --max-semi-space-size, `root=<dir>` runs another checkout's start.js (an older commit's tree,
// for a before/after in one run), and any other NAME=value is an environment variable
// (LOG_LEVEL=warn, say). Every server idles `--idle` seconds (its start-up collection runs at
// 1 s) and its idle RSS is read; then, in `--rounds` rounds (the order rotated each round),
// every variant serves every scenario — get_daily_ops (30 days) over REST, over MCP at
// 2025-11-25 and at 2026-07-28 — under each load: `fixed` (`--rate` requests/s over 10
// connections) and `burst` (`--connections`, as fast as answered). Per run: requests/s, the
// server process's CPU per request (/proc/<pid>/stat: user + system, the database's excluded
// on PostgreSQL), its RSS at the end of the run and the log bytes and lines it wrote per
// request. The summary gives each figure's median over the rounds and, per variant, MCP / REST
// as the median of the rounds' ratios (measured side by side). The load generator runs in a
// process of its own (bench/client.ts). Databases are dropped at the end, also on Ctrl-C.
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual, parseArgs } from 'node:util'
import { Client, freePort, loadAverage, median, numericOption } from './client-process.ts'
import type { CannonResult } from './client.ts'
import { databaseUrl, dropDatabases, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const SCENARIOS = ['rest', 'mcp', 'mcp26'] as const
type Scenario = (typeof SCENARIOS)[number]
const MODES = ['fixed', 'burst'] as const
type Mode = (typeof MODES)[number]

const USAGE = `Usage: node bench/mcp-cost.ts [options]

  --variant <spec>     a server to measure, repeatable (default: one, npm start's own): comma-separated
                       semi=<MB> (--max-semi-space-size), root=<dir> (another checkout's start.js),
                       NAME=value (an environment variable: LOG_LEVEL=warn)
  --only <list>        scenarios: rest, mcp (2025-11-25), mcp26 (2026-07-28) (default all)
  --modes <list>       fixed, burst (default both)
  --rate <n>           requests/s of the fixed load (default 500)
  --connections <n>    connections of the burst (default 50)
  --duration <s>       seconds per measured run (default 3)
  --warmup <s>         seconds of unmeasured burst per variant and scenario before round 1 (default 2)
  --rounds <n>         rounds, each in a rotated order (default 3)
  --idle <s>           seconds each server idles after its start and seeding before its idle RSS is read (default 5)
  --embedded           the embedded database (a temporary DATA_DIR per server) instead of PostgreSQL
  --db-prefix <name>   database names on BENCH_DATABASE_URL's server (default growthdesk_bench_mcpcost)
`

const root = path.join(import.meta.dirname, '..')
const startCommand = (JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/).slice(1)

interface Variant {
  label: string
  args: string[]
  cwd: string
  env: Record<string, string>
}

interface Server {
  variant: Variant
  child: ChildProcess
  origin: string
  service: string
  project: string
  idleRssMb: number
  /** Bytes and lines the server has written to stdout (its log) so far. */
  logBytes: number
  logLines: number
  dataDir?: string
  dbName?: string
}

interface Run {
  rps: number
  cpuUs: number
  rssMb: number
  logBytes: number
  logLines: number
  failed: number
}

function parseVariant(spec: string): Variant {
  let args = [...startCommand]
  let cwd = root
  const env: Record<string, string> = {}
  for (const part of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const eq = part.indexOf('=')
    if (eq < 1) throw new Error(`--variant: "${part}" is not NAME=value`)
    const [name, value] = [part.slice(0, eq), part.slice(eq + 1)]
    if (name === 'semi') {
      if (!/^\d+$/.test(value)) throw new Error(`--variant: semi takes a whole number of MB (got ${value})`)
      args = args.filter((a) => !a.startsWith('--max-semi-space-size'))
      args.unshift(`--max-semi-space-size=${value}`)
    } else if (name === 'root') {
      cwd = path.resolve(value)
      if (!fs.existsSync(path.join(cwd, 'start.js'))) throw new Error(`--variant: ${cwd} has no start.js`)
    } else env[name] = value
  }
  return { label: spec || 'npm start', args, cwd, env }
}

const cpuOf = (pid: number) => {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / ticksPerSecond
}
const rssMbOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
let ticksPerSecond = 100

await main()

async function main() {
  const { values: a } = parseArgs({
    options: {
      variant: { type: 'string', multiple: true },
      only: { type: 'string', default: SCENARIOS.join(',') },
      modes: { type: 'string', default: MODES.join(',') },
      rate: { type: 'string', default: '500' },
      connections: { type: 'string', default: '50' },
      duration: { type: 'string', default: '3' },
      warmup: { type: 'string', default: '2' },
      rounds: { type: 'string', default: '3' },
      idle: { type: 'string', default: '5' },
      embedded: { type: 'boolean', default: false },
      'db-prefix': { type: 'string', default: 'growthdesk_bench_mcpcost' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (a.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const num = numericOption(USAGE, { integer: true })
  const rate = num('rate', a.rate, 1, 100_000)
  const connections = num('connections', a.connections, 1, 1000)
  const duration = num('duration', a.duration, 1, 600)
  const warmup = num('warmup', a.warmup, 0, 600)
  const rounds = num('rounds', a.rounds, 1, 100)
  const idle = num('idle', a.idle, 2, 600)
  const pick = <T extends string>(name: string, list: string, allowed: readonly T[]): T[] => {
    const chosen = list.split(',').map((s) => s.trim())
    for (const c of chosen) {
      if (!(allowed as readonly string[]).includes(c)) {
        process.stderr.write(`--${name} takes ${allowed.join(', ')} (got ${JSON.stringify(c)}).\n`)
        process.exit(2)
      }
    }
    return chosen as T[]
  }
  const scenarios = pick('only', a.only!, SCENARIOS)
  const modes = pick('modes', a.modes!, MODES)
  const prefix = a['db-prefix']!
  if (!/^[a-z_][a-z0-9_]{0,50}$/.test(prefix)) {
    process.stderr.write('--db-prefix must be a lower-case SQL identifier of at most 51 characters.\n')
    process.exit(2)
  }
  let variants: Variant[]
  try {
    variants = (a.variant ?? ['']).map(parseVariant)
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}`)
    process.exit(2)
  }
  try {
    ticksPerSecond = Number((await import('node:child_process')).execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100
  } catch {
    // Linux's USER_HZ is 100 nearly everywhere.
  }

  const log = (line = '') => process.stdout.write(`${line}\n`)
  const servers: Server[] = []
  const client = new Client()
  const cleanup = registerCleanup(async () => {
    client.close()
    for (const s of servers) {
      if (s.child.exitCode === null && s.child.signalCode === null) {
        const exited = new Promise((resolve) => s.child.once('exit', resolve))
        s.child.kill('SIGTERM')
        await exited
      }
      if (s.dataDir) fs.rmSync(s.dataDir, { recursive: true, force: true })
    }
    const names = servers.flatMap((s) => (s.dbName ? [s.dbName] : []))
    if (names.length > 0 && (await dropDatabases(names))) log(`Dropped ${names.join(', ')}.`)
  })

  let failed = false
  try {
    const database = a.embedded ? 'embedded (PGlite, in the server process)' : `PostgreSQL ${await serverVersion()}`
    log(`growthdesk bench:mcp-cost — ${database}, ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}`)
    log(`npm start: node ${startCommand.join(' ')}; fixed load ${rate} req/s over 10 connections, burst ${connections} connections; ${duration} s a run, ${rounds} rounds`)
    // One after another, each read after the same idle time since its own start (V8 gives memory
    // back after a while idle: a server read later would look smaller).
    for (const [i, variant] of variants.entries()) {
      const s = await startServer(variant, i, prefix, a.embedded!, (started) => servers.push(started))
      await new Promise((resolve) => setTimeout(resolve, idle * 1000))
      s.idleRssMb = rssMbOf(s.child.pid!)
    }
    for (const s of servers) log(`  ${s.variant.label.padEnd(36)} pid ${s.child.pid}  node ${s.variant.args.filter((x) => x.startsWith('--')).join(' ')}  idle RSS ${s.idleRssMb.toFixed(1)} MB`)

    const taskOf = (s: Server, scenario: Scenario) => {
      const args = { project: s.project, window: '30d' }
      const headers = { authorization: `Bearer ${s.service}`, 'content-type': 'application/json' }
      if (scenario === 'rest') return { url: `${s.origin}/v1/tools/get_daily_ops`, method: 'POST' as const, headers, body: JSON.stringify(args) }
      const modern = scenario === 'mcp26'
      const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }
      return {
        url: `${s.origin}/mcp`,
        method: 'POST' as const,
        headers: {
          ...headers,
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': modern ? '2026-07-28' : '2025-11-25',
          ...(modern ? { 'mcp-method': 'tools/call', 'mcp-name': 'get_daily_ops' } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_daily_ops', arguments: args, ...(modern ? { _meta: meta } : {}) } }),
      }
    }
    // Once per server: REST and both MCP eras answer the same result (the bench measures real answers).
    for (const s of servers) {
      const rest = await fetch(taskOf(s, 'rest').url, taskOf(s, 'rest'))
      const expected = ((await rest.json()) as { result?: { days?: unknown[] } }).result
      if (rest.status !== 200 || expected?.days?.length !== 30) throw new Error(`${s.variant.label}: REST get_daily_ops answered ${rest.status}`)
      for (const scenario of ['mcp', 'mcp26'] as const) {
        const res = await fetch(taskOf(s, scenario).url, taskOf(s, scenario))
        const json = (await res.json()) as { result?: { structuredContent?: unknown } }
        if (res.status !== 200 || !isDeepStrictEqual(json.result?.structuredContent, expected)) throw new Error(`${s.variant.label}: MCP (${scenario}) answered ${res.status} ${JSON.stringify(json).slice(0, 300)}`)
      }
    }
    log('checked: every server answers get_daily_ops (30 days) alike over REST and MCP in both eras')

    const cells = servers.flatMap((s) => scenarios.flatMap((scenario) => modes.map((mode) => ({ s, scenario, mode }))))
    const runs = new Map<string, Run[]>()
    const keyOf = (s: Server, scenario: Scenario, mode: Mode) => `${servers.indexOf(s)}|${scenario}|${mode}`
    if (warmup > 0) {
      for (const s of servers) for (const scenario of scenarios) await client.run<CannonResult>({ kind: 'autocannon', ...taskOf(s, scenario), connections, seconds: warmup })
    }
    for (let round = 1; round <= rounds; round++) {
      log(`round ${round} of ${rounds} (load average ${loadAverage()})`)
      const order = cells.map((_, i) => cells[(i + (round - 1) * Math.max(1, Math.floor(cells.length / rounds))) % cells.length]!)
      for (const { s, scenario, mode } of order) {
        const pid = s.child.pid!
        const cpuBefore = cpuOf(pid)
        const logBefore = [s.logBytes, s.logLines]
        const r = await client.run<CannonResult>({
          kind: 'autocannon', ...taskOf(s, scenario), seconds: duration, ...(mode === 'fixed' ? { connections: 10, rate } : { connections }),
        })
        // The log lines of the last responses are written as they complete: a moment for the pipe.
        await new Promise((resolve) => setTimeout(resolve, 100))
        const requests = Math.max(1, r.total)
        const run: Run = {
          rps: r.requestsPerSecond,
          cpuUs: (cpuOf(pid) - cpuBefore) / requests,
          rssMb: rssMbOf(pid),
          logBytes: (s.logBytes - logBefore[0]!) / requests,
          logLines: (s.logLines - logBefore[1]!) / requests,
          failed: r.non2xx + r.errors,
        }
        if (run.failed > 0) failed = true
        const list = runs.get(keyOf(s, scenario, mode)) ?? []
        list.push(run)
        runs.set(keyOf(s, scenario, mode), list)
        log(`  ${s.variant.label.padEnd(36)} ${scenario.padEnd(6)} ${mode.padEnd(6)} ${fmt(run.rps, 0).padStart(7)} req/s  CPU ${fmt(run.cpuUs, 0).padStart(5)} µs/req  RSS ${fmt(run.rssMb, 1).padStart(6)} MB  log ${fmt(run.logLines, 2)} lines ${fmt(run.logBytes, 0)} B/req${run.failed ? `  FAILED ${run.failed}` : ''}`)
      }
    }

    log()
    log(`medians of ${rounds} rounds (load average ${loadAverage()}):`)
    log(`  ${'variant'.padEnd(36)} ${'call'.padEnd(6)} ${'load'.padEnd(6)}   req/s  CPU µs/req  RSS MB  log lines/req  B/req   idle RSS MB`)
    for (const { s, scenario, mode } of cells) {
      const list = runs.get(keyOf(s, scenario, mode))!
      const m = (f: (r: Run) => number) => median(list.map(f))
      log(`  ${s.variant.label.padEnd(36)} ${scenario.padEnd(6)} ${mode.padEnd(6)} ${fmt(m((r) => r.rps), 0).padStart(7)}  ${fmt(m((r) => r.cpuUs), 0).padStart(10)}  ${fmt(Math.max(...list.map((r) => r.rssMb)), 1).padStart(6)}  ${fmt(m((r) => r.logLines), 2).padStart(13)}  ${fmt(m((r) => r.logBytes), 0).padStart(5)}   ${fmt(s.idleRssMb, 1).padStart(10)}`)
    }
    if (scenarios.includes('rest') && scenarios.length > 1) {
      log()
      log('MCP / REST, per variant and load (median of the rounds\' ratios; target: req/s ≥ 90 %, CPU ≤ 1.1×):')
      for (const s of servers) {
        for (const mode of modes) {
          const rest = runs.get(keyOf(s, 'rest', mode))!
          for (const scenario of scenarios.filter((x) => x !== 'rest')) {
            const list = runs.get(keyOf(s, scenario, mode))!
            const rps = median(list.map((r, i) => r.rps / rest[i]!.rps))
            const cpu = median(list.map((r, i) => r.cpuUs / rest[i]!.cpuUs))
            const verdict = mode === 'burst' ? `   ${rps >= 0.9 && cpu <= 1.1 ? 'PASS' : 'FAIL'}` : ''
            log(`  ${s.variant.label.padEnd(36)} ${scenario.padEnd(6)} ${mode.padEnd(6)} req/s ${(rps * 100).toFixed(1).padStart(5)} %   CPU ${cpu.toFixed(2)}×${verdict}   (rounds: ${list.map((r, i) => `${((r.rps / rest[i]!.rps) * 100).toFixed(0)} %/${(r.cpuUs / rest[i]!.cpuUs).toFixed(2)}×`).join(', ')})`)
          }
        }
      }
    }
    if (servers.length > 1) {
      log()
      log(`CPU per call against the first variant (${servers[0]!.variant.label}), median of the rounds' ratios:`)
      for (const s of servers.slice(1)) {
        for (const scenario of scenarios) {
          for (const mode of modes) {
            const base = runs.get(keyOf(servers[0]!, scenario, mode))!
            const list = runs.get(keyOf(s, scenario, mode))!
            log(`  ${s.variant.label.padEnd(36)} ${scenario.padEnd(6)} ${mode.padEnd(6)} ${median(list.map((r, i) => r.cpuUs / base[i]!.cpuUs)).toFixed(2)}×`)
          }
        }
      }
    }
    log(`load average after: ${loadAverage()}`)
  } catch (err) {
    failed = true
    reportFailure('bench:mcp-cost', err)
  } finally {
    await cleanup()
  }
  process.exit(failed ? 1 : 0)
}

/** A server started as npm start starts it, first-started on a fresh database, with a few events. */
async function startServer(variant: Variant, index: number, prefix: string, embedded: boolean, track: (s: Server) => void): Promise<Server> {
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  const env: Record<string, string> = { HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, RATE_LIMIT_MAX: '1000000', RATE_LIMIT_CONCURRENCY: '0' }
  let dataDir: string | undefined
  let dbName: string | undefined
  if (embedded) {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-mcpcost-'))
    env.DATA_DIR = dataDir
  } else {
    dbName = `${prefix}_${index}`
    await recreateDatabase(dbName)
    env.DATABASE_URL = databaseUrl(dbName)
  }
  const { DATABASE_URL: _inherited, ...inherited } = process.env
  const child = spawn(process.execPath, variant.args, { cwd: variant.cwd, env: { ...inherited, ...env, ...variant.env }, stdio: ['ignore', 'pipe', 'inherit'] })
  const server: Server = { variant, child, origin, service: '', project: '', idleRssMb: 0, logBytes: 0, logLines: 0, dataDir, dbName }
  track(server)
  let out = ''
  let ingest = ''
  const printed = new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      server.logBytes += chunk.length
      for (const byte of chunk) if (byte === 10) server.logLines++
      if (!server.service) {
        out += chunk.toString()
        const service = /service:\s+(gds_\S+)/.exec(out)?.[1]
        const project = /project:\s+\S+ \((prj_[^)]+)\)/.exec(out)?.[1]
        const ingestKey = /ingest:\s+(gdi_\S+)/.exec(out)?.[1]
        if (service && project && ingestKey) {
          Object.assign(server, { service, project })
          ingest = ingestKey
          resolve()
        }
      }
    })
  })
  const exited = new Promise<never>((_resolve, reject) => child.once('exit', (code) => reject(new Error(`${variant.label}: the server exited (${code}) before it printed its keys`))))
  await Promise.race([printed, exited])
  // The same events as bench:http, through the ingestion endpoint.
  const now = Date.now()
  const events = Array.from({ length: 300 }, (_, i) => ({
    event: i % 10 === 0 ? 'signup' : 'daily_use',
    distinct_id: `user_${i % 60}`,
    timestamp: new Date(now - (i % 7) * 86_400_000 - (i % 3600) * 1000).toISOString(),
  }))
  const res = await fetch(`${origin}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${ingest}`, 'content-type': 'application/json' }, body: JSON.stringify({ events }) })
  if (res.status !== 200) throw new Error(`${variant.label}: seeding events: ${res.status} ${await res.text()}`)
  return server
}

function fmt(n: number, digits: number): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}
