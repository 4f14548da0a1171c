// npm run bench:fair-use [-- --seconds 10] [--connections 64]
//
// Does one noisy key slow another workspace down? On the local PostgreSQL, the server started
// as `npm start` starts it (its own process, the same flags, the default log level), once with
// the default limits (RATE_LIMIT_* unset) and once with the per-credential limits off: a quiet
// tenant (workspace B) reads its daily-ops 20 times a second on one connection, first alone,
// then while workspace A floods the same read with `--connections` keep-alive connections (the
// server with limits refuses most of the flood: over 8 concurrent requests, or over 300 in a
// window). Printed: B's p50/p99 alone and beside the flood, and what the flood got (2xx and
// 429). Target (issue 30): with the limits on, B's p50 beside the flood ≤ 2× its p50 alone, at
// 64 flooding connections. The load generators are child processes; the exit code is 1 when the
// target is missed.
import { parseArgs } from 'node:util'
import os from 'node:os'
import path from 'node:path'
import { spawn, type ChildProcess } from 'node:child_process'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import type { CannonResult, LatencyResult } from './client.ts'
import { Client, freePort, loadAverage } from './client-process.ts'
import { databaseUrl, dropDatabases, isDatabaseName, recreateDatabase } from './database.ts'
import { npmStart } from './server-process.ts'

const USAGE = 'Usage: npm run bench:fair-use -- [--seconds 1…600] [--connections 1…1000] [--db-name name]\n'
/** `npm start`'s command (package.json's start script, read now), run by this Node. */
const START_ARGS = [...npmStart().flags, npmStart().script]
let parsed
try {
  parsed = parseArgs({
    options: {
      seconds: { type: 'string', default: '10' },
      connections: { type: 'string', default: '64' },
      'db-name': { type: 'string', default: 'growthdesk_bench_fair_use' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${USAGE}`)
  process.exit(2)
}
const args = parsed.values
if (args.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const seconds = Number(args.seconds)
const connections = Number(args.connections)
const dbName = args['db-name']!
if (!(seconds >= 1 && seconds <= 600) || !(connections >= 1 && connections <= 1000) || !isDatabaseName(dbName)) {
  process.stderr.write(USAGE)
  process.exit(2)
}

const log = (line = '') => process.stdout.write(`${line}\n`)
const INTERVAL_MS = 50

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN
}

async function scenario(label: string, env: Record<string, string>): Promise<{ alone: number; flooded: number }> {
  await recreateDatabase(dbName)
  const port = await freePort()
  const origin = `http://127.0.0.1:${port}`
  let server: ChildProcess | undefined
  const quietClient = new Client()
  const floodClient = new Client()
  try {
    // The two workspaces, made before the server starts (migrations and bootstrap in this process).
    const setup = await buildApp({
      config: { ...loadConfig({ HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, LOG_LEVEL: 'silent' }), database: { kind: 'postgres', url: databaseUrl(dbName) } },
      logger: false,
    })
    let a, b
    try {
      a = await bootstrap(setup, { workspace: 'noisy', email: 'noisy@growthdesk.bench', project: 'Noisy' })
      b = await bootstrap(setup, { workspace: 'quiet', email: 'quiet@growthdesk.bench', project: 'Quiet' })
    } finally {
      await setup.close()
    }
    server = spawn(process.execPath, START_ARGS, {
      cwd: path.join(import.meta.dirname, '..'),
      env: { ...process.env, DATABASE_URL: databaseUrl(dbName), HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, ...env },
      // The log goes where `npm start` writes it, minus the terminal: written, not kept.
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    for (let i = 0; !(await fetch(`${origin}/health`).then((r) => r.ok, () => false)); i++) {
      if (i > 600 || server.exitCode !== null) throw new Error('the server did not start')
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const read = (ws: typeof a) => ({ url: `${origin}/api/v1/mcp/projects/${ws.project.id}/daily-ops`, headers: { authorization: `Bearer ${ws.keys.mcp}` } })
    const requests = Math.round((seconds * 1000) / INTERVAL_MS)

    const alone = await quietClient.run<LatencyResult>({ kind: 'latency', ...read(b), warmup: 20, requests, intervalMs: INTERVAL_MS })
    const [flood, beside] = await Promise.all([
      floodClient.run<CannonResult>({ kind: 'autocannon', ...read(a), connections, seconds: seconds + 2 }),
      // The flood starts first: the quiet tenant's samples all fall inside it.
      new Promise((resolve) => setTimeout(resolve, 1000)).then(() =>
        quietClient.run<LatencyResult>({ kind: 'latency', ...read(b), warmup: 0, requests, intervalMs: INTERVAL_MS })),
    ])
    const p = (r: LatencyResult, q: number) => quantile(r.samples, q)
    log(`${label}`)
    log(`  quiet tenant alone        p50 ${p(alone, 0.5).toFixed(2).padStart(7)} ms   p99 ${p(alone, 0.99).toFixed(2).padStart(7)} ms   (${alone.samples.length} reads)`)
    log(`  quiet tenant beside flood p50 ${p(beside, 0.5).toFixed(2).padStart(7)} ms   p99 ${p(beside, 0.99).toFixed(2).padStart(7)} ms   (${beside.samples.length} reads, all 200)`)
    log(`  flood: ${flood.total} requests, ${Math.round(flood.requestsPerSecond)} req/s, ${flood.total - flood.non2xx} answered 2xx, ${flood.non2xx} refused (429), errors ${flood.errors}`)
    log(`  slow-down of the quiet tenant: p50 ×${(p(beside, 0.5) / p(alone, 0.5)).toFixed(2)}, p99 ×${(p(beside, 0.99) / p(alone, 0.99)).toFixed(2)}`)
    return { alone: p(alone, 0.5), flooded: p(beside, 0.5) }
  } finally {
    quietClient.close()
    floodClient.close()
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve))
      server.kill('SIGTERM')
      await exited
    }
    await dropDatabases([dbName])
  }
}

log(`growthdesk bench:fair-use — ${os.cpus().length} CPUs, Node ${process.version}, load average ${loadAverage()}`)
log(`server: \`node ${START_ARGS.join(' ')}\` (npm start) on PostgreSQL; flood: ${connections} keep-alive connections for ${seconds + 2} s; quiet tenant: one read every ${INTERVAL_MS} ms on one connection`)
log()
const limited = await scenario('default limits (300 requests per 10 s and 8 at a time per credential)', {})
log()
await scenario('no per-credential limits (RATE_LIMIT_MAX=0, RATE_LIMIT_CONCURRENCY=0)', { RATE_LIMIT_MAX: '0', RATE_LIMIT_CONCURRENCY: '0' })
log()
const ratio = limited.flooded / limited.alone
log(`target: quiet tenant's p50 beside the flood ≤ 2× alone, with the default limits — ×${ratio.toFixed(2)} ${ratio <= 2 ? 'PASS' : 'FAIL'}`)
log(`load average after: ${loadAverage()}`)
process.exit(ratio <= 2 ? 0 : 1)
