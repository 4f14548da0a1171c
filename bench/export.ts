// npm run bench:export [-- --rows 1000000] [--keep] [--reuse] [--db-name growthdesk_bench_export]
//
// The CSV export of issue 16 at 1 M opportunities, on the local PostgreSQL:
//  1. a fresh database (dropped first), migrated and bootstrapped by the app, then the
//     opportunities generated on the server (bench/load.ts, realistic texts), indexes built
//     after the load, VACUUM ANALYZE;
//  2. the server started as `npm start` starts it (its own process, the same Node flags) on a
//     loopback port, and its RSS read from /proc every 50 ms;
//  3. exports over HTTP (format=csv), each counted as it arrives: everything, one status, and a
//     text search (which reads every row); time, rows/s, MB/s, the server's peak RSS over its
//     RSS before the exports, and the load average.
// The database is dropped afterwards unless --keep. The exit code is 1 when a full export's
// row count is wrong or the server's RSS grows by 200 MB or more.
import { parseArgs } from 'node:util'
import { spawn } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import postgres from 'postgres'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap, createKey } from '../bin/admin.ts'
import { localDate } from '../core/time.ts'
import { freePort } from './client-process.ts'
import { databaseUrl, dropDatabases, isDatabaseName, quiet, recreateDatabase, registerCleanup } from './database.ts'
import { npmStart } from './server-process.ts'
import { createIndexes, dropSecondaryIndexes, loadOpportunities } from './load.ts'

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    keep: { type: 'boolean', default: false },
    reuse: { type: 'boolean', default: false },
    'db-name': { type: 'string', default: 'growthdesk_bench_export' },
    jobs: { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
})
const rows = Number(args.rows)
const jobs = Number(args.jobs)
const dbName = args['db-name']!
if (args.help || !(Number.isSafeInteger(rows) && rows >= 1 && rows <= 20_000_000) || !(jobs >= 1 && jobs <= 16) || !isDatabaseName(dbName)) {
  process.stdout.write('Usage: npm run bench:export -- [--rows 1…20000000] [--jobs n] [--keep] [--reuse] [--db-name name]\n  server from BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)\n')
  process.exit(args.help ? 0 : 2)
}

const log = (line = '') => process.stdout.write(`${line}\n`)
const benchUrl = databaseUrl(dbName)
const MB = 2 ** 20
const EMAIL = 'export@growthdesk.bench'
const fmt = (n: number) => Math.round(n).toLocaleString('en-US')

async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const started = performance.now()
  process.stdout.write(`  ${label} … `)
  const result = await fn()
  process.stdout.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  return result
}

/** VmRSS of a process in bytes, or 0 once it is gone. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : 0
  } catch {
    return 0
  }
}

log(`=== bench:export — ${fmt(rows)} opportunities, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`)
log(`database: ${benchUrl}${args.reuse ? ' (reused)' : ''}`)
log()
log('Load')
if (!args.reuse) await step(`drop + create database ${dbName}`, () => recreateDatabase(dbName))
const config = { ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn' }), database: { kind: 'postgres' as const, url: benchUrl }, logLevel: 'warn' }
const app = await step('build app (migrations)', () => buildApp({ config, logger: false }))
const sql = postgres(benchUrl, { max: jobs, ...quiet, connection: { synchronous_commit: 'off', work_mem: '256MB', maintenance_work_mem: '1GB' } })
let projectId: string
let key: string
try {
  if (!args.reuse) {
    const boot = await step('bootstrap workspace', () => bootstrap(app, { workspace: 'growthdesk export bench', email: EMAIL, project: 'Export bench' }))
    projectId = boot.project.id
    key = boot.keys.mcp
    const now = new Date()
    const indexes = await dropSecondaryIndexes(sql, 'opportunities')
    await step(`insert ${fmt(rows)} opportunities (generate_series, ${jobs} connections)`, () =>
      loadOpportunities(sql, { projectId, timeZone: 'UTC', submittedBy: boot.user.id, events: 0, users: 0, days: 90, opportunities: rows, now, today: localDate(now, 'UTC') }, jobs, 50_000, () => {}))
    await step(`build ${indexes.length} indexes`, () => createIndexes(sql, indexes, jobs))
    await step('vacuum analyze', async () => {
      await sql.unsafe('vacuum analyze opportunities')
    })
  } else {
    const [found] = await sql<{ id: string }[]>`select p.id from projects p join users u on u.workspace_id = p.workspace_id where u.email = ${EMAIL} limit 1`
    if (!found) throw new Error(`--reuse: no bench project in ${dbName}; run once with --keep first`)
    projectId = found.id
    key = (await createKey(app, { email: EMAIL, kind: 'mcp', name: 'export bench reuse' })).key
  }
  const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from opportunities where project_id = ${projectId}` as unknown as [{ n: number }]
  log(`  ${fmt(n)} opportunities in the project`)
} finally {
  await sql.end()
  await app.close()
}

// The server as `npm start` runs it, in its own process.
const port = await freePort()
const origin = `http://127.0.0.1:${port}`
const root = path.join(import.meta.dirname, '..')
const server = spawn(process.execPath, [...npmStart().flags, npmStart().script], {
  cwd: root,
  env: { ...process.env, DATABASE_URL: benchUrl, HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: origin, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000' },
  stdio: ['ignore', 'ignore', 'inherit'],
})
// At the end, or on Ctrl-C: the server stopped, the database dropped (unless --keep).
const cleanup = registerCleanup(async () => {
  if (server.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server.once('exit', resolve))
    server.kill('SIGTERM')
    await exited
  }
  if (!args.keep) await dropDatabases([dbName])
})
let failed = false
try {
  for (let i = 0; ; i++) {
    const up = await fetch(`${origin}/health`).then((r) => r.ok, () => false)
    if (up) break
    if (i > 600 || server.exitCode !== null) throw new Error('the server did not start')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  const pid = server.pid!
  log()
  log(`Exports (server pid ${pid}, ${origin}; RSS sampled every 50 ms)`)
  const runs: { label: string; query: string; expected?: number }[] = [
    { label: 'warm-up: one status, not measured', query: '&status=done' },
    { label: 'everything', query: '', expected: rows },
    { label: 'status=pending', query: '&status=pending' },
    { label: 'q=Discord (reads every row)', query: '&q=Discord' },
    { label: 'everything, again', query: '', expected: rows },
  ]
  const baseline = rssOf(pid)
  log(`  server RSS before: ${(baseline / MB).toFixed(0)} MB`)
  log()
  log('  export                              rows        time      rows/s     MB/s   peak RSS (growth)   load avg')
  let worstGrowth = 0
  for (const run of runs) {
    let peak = rssOf(pid)
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(pid))
    }, 50)
    const started = performance.now()
    const res = await fetch(`${origin}/api/v1/mcp/projects/${projectId}/opportunities?format=csv${run.query}`, { headers: { authorization: `Bearer ${key}` } })
    if (res.status !== 200) throw new Error(`${run.label}: ${res.status} ${await res.text()}`)
    let bytes = 0
    let quoted = false
    let records = -1 // the header row
    let prev = 0
    for await (const chunk of res.body!) {
      bytes += chunk.byteLength
      // Records end in CRLF outside quotes (a quoted field may hold line breaks).
      for (const b of chunk) {
        if (b === 34) quoted = !quoted
        else if (b === 10 && prev === 13 && !quoted) records++
        prev = b
      }
    }
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    peak = Math.max(peak, rssOf(pid))
    const growth = (peak - baseline) / MB
    if (!run.label.startsWith('warm-up')) worstGrowth = Math.max(worstGrowth, growth)
    if (run.expected !== undefined && records !== run.expected) {
      failed = true
      log(`  ! ${run.label}: ${records} records, expected ${run.expected}`)
    }
    log(`  ${run.label.padEnd(34)} ${fmt(records).padStart(9)} ${seconds.toFixed(2).padStart(9)} s ${fmt(records / seconds).padStart(10)} ${(bytes / MB / seconds).toFixed(1).padStart(8)}   ${(peak / MB).toFixed(0).padStart(5)} MB (+${growth.toFixed(0)} MB)   ${os.loadavg()[0]!.toFixed(2)}`)
  }
  log()
  log(`Server RSS: ${(baseline / MB).toFixed(0)} MB before, at most +${worstGrowth.toFixed(0)} MB during an export (target: constant, under +200 MB)`)
  if (worstGrowth >= 200) failed = true
} finally {
  await cleanup()
}
process.exit(failed ? 1 : 0)
