// node bench/drift.ts [--slices 8] [--duration 5] [--connections 50]
//
// Does a server's CPU per request grow while it runs? bench:http's reference server (Fastify and
// a postgres.js pool, one primary-key lookup a request; bench/reference-server.ts, under npm
// start's flags) loaded by autocannon in slices, one right after the other: req/s, CPU per
// request and RSS per slice, and the last slice's CPU against the first's. With postgres.js'
// pool queue as published, CPU per request grew with every request served while all ten
// connections were busy (41 → 123 µs over 8 slices of 5 s); patched (patches/), it stays flat.
// The server's GET /health, which touches no database, is the control (--health).
// A database of its own with one project; dropped at the end.
import { parseArgs } from 'node:util'
import os from 'node:os'
import path from 'node:path'
import fs from 'node:fs'
import postgres from 'postgres'
import { startServer } from './server-process.ts'
import { Client, freePort, loadAverage, numericOption } from './client-process.ts'
import type { CannonResult, CannonTask } from './client.ts'
import { checkDatabaseName, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure } from './database.ts'
import { postgresQueuePatched } from '../db/postgres-patch.ts'

const USAGE = `Usage: node bench/drift.ts [options]

  --slices <n>       slices of load, back to back (default 8)
  --duration <s>     seconds per slice (default 5; a 3 s warm-up comes first)
  --connections <n>  autocannon connections (default 50)
  --health           load GET /health (no database) instead of the lookup: the control
  --db-name <name>   database name (default growthdesk_bench_drift), dropped at the end
`
const { values: opts } = parseArgs({
  options: { slices: { type: 'string' }, duration: { type: 'string' }, connections: { type: 'string' }, health: { type: 'boolean' }, 'db-name': { type: 'string' }, help: { type: 'boolean' } },
})
if (opts.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const num = numericOption(USAGE, { integer: true })
const slices = num('slices', opts.slices ?? '8', 2, 1000)
const duration = num('duration', opts.duration ?? '5', 1, 3600)
const connections = num('connections', opts.connections ?? '50', 1, 1000)
const dbName = checkDatabaseName(opts['db-name'] ?? 'growthdesk_bench_drift')
const log = (line: string) => process.stdout.write(`${line}\n`)

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'gd-bench-drift-'))
const client = new Client()
let server: Awaited<ReturnType<typeof startServer>> | undefined
const cleanup = registerCleanup(async () => {
  client.close()
  await server?.stop().catch(() => {})
  fs.rmSync(tmp, { recursive: true, force: true })
  await dropDatabases([dbName])
})

let failed = false
try {
  await recreateDatabase(dbName)
  const url = databaseUrl(dbName)
  const setup = postgres(url, { max: 1, ...quiet })
  await setup`create table projects (id text primary key, name text not null, timezone text not null)`
  await setup`insert into projects values ('p_drift', 'Drift', 'UTC')`
  await setup.end()
  server = await startServer({ port: await freePort(), logFile: path.join(tmp, 'reference.log'), env: { DATABASE_URL: url }, script: 'bench/reference-server.ts' })
  const task: Omit<CannonTask, 'kind' | 'connections' | 'seconds'> = opts.health
    ? { url: `${server.origin}/health`, method: 'GET', headers: {} }
    : { url: `${server.origin}/reference`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ project: 'p_drift' }) }
  log(`growthdesk bench:drift — ${opts.health ? 'GET /health (control)' : 'the reference server\'s primary-key lookup'}, ${connections} connections, ${slices} slices of ${duration} s; ` +
    `postgres.js pool queue ${postgresQueuePatched() ? 'patched' : 'NOT patched'}; Node ${process.version}, load average ${loadAverage()}`)
  await client.run<CannonResult>({ kind: 'autocannon', ...task, connections, seconds: 3 })
  const cpu: number[] = []
  for (let i = 1; i <= slices; i++) {
    const before = server.cpuMs()
    const r = await client.run<CannonResult>({ kind: 'autocannon', ...task, connections, seconds: duration })
    const us = ((server.cpuMs() - before) * 1000) / Math.max(1, r.total)
    cpu.push(us)
    if (r.non2xx || r.errors) failed = true
    log(`  slice ${String(i).padStart(2)}: ${Math.round(r.requestsPerSecond).toLocaleString('en-US').padStart(7)} req/s, ${us.toFixed(1).padStart(6)} µs of server CPU a request, RSS ${(server.rss() / 2 ** 20).toFixed(0)} MB` +
      (r.non2xx || r.errors ? `, non-2xx ${r.non2xx}, errors ${r.errors}` : ''))
  }
  log(`last slice against the first: ${(cpu.at(-1)! / cpu[0]!).toFixed(2)}× the CPU a request; load average ${loadAverage()}`)
} catch (err) {
  failed = true
  reportFailure('bench:drift', err)
} finally {
  await cleanup()
}
process.exit(failed ? 1 : 0)
