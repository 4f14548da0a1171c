// node bench/copy-stall.ts [--rows 10,1000,10000] [--reps 15] [--db-name growthdesk_bench_copy_stall]
//
// Issue 31, item 6: through postgres.js, every `COPY … FROM STDIN` took ~88 ms of wall time,
// even for 10 rows. Two waits of ~40 ms, both Nagle's algorithm (postgres.js never calls
// socket.setNoDelay) meeting the server's delayed ACK (40 ms minimum on Linux), as strace of the
// socket shows:
//  1. the COPY stream writes each CopyData, then CopyDone, with a socket.write() of its own
//     (connection.js, CopyInResponse). CopyDone (5 bytes) follows a segment the server has not
//     acknowledged (it answers nothing to CopyData), so the kernel holds it until the ACK;
//  2. the stream is built with autoDestroy: true, and Node calls its destroy(null) once it has
//     finished, which writes a CopyFail message ("null") after the COPY has completed. The
//     server ignores a CopyFail outside copy mode and answers nothing, so the connection's next
//     message (the next COPY, or any query) is held behind it until the delayed ACK.
// Queries are not hit: the server answers each message that precedes the next one.
// Workaround: a socket with setNoDelay(true), through postgres.js's `socket` option (noDelay in
// bench/database.ts). Writing the data with one write (stream.end(data)) does not help: CopyDone
// and the stray CopyFail are still writes of their own.
// This reproduction times, on one connection each, alternating within every repetition:
//   copy         postgres.js as it is: `copy … from stdin`, one stream.write per 1000 rows, then end()
//   copy+nodelay the same, on a socket with setNoDelay(true) (postgres.js's `socket` option)
//   copy+1write  postgres.js as it is, all the data in stream.end(data): still two socket writes
//   unnest       INSERT … SELECT FROM unnest(…) ON CONFLICT DO NOTHING (the idempotent floor)
//   unnest+nodelay  the same on the setNoDelay socket
// into a table shaped like events (unique (project_seq, uuid)), and prints the median wall time
// of each. The database is created afresh and dropped at the end (also on Ctrl-C).
import { parseArgs } from 'node:util'
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import postgres, { type Sql } from 'postgres'
import { loadAverage, median, numericOption } from './client-process.ts'
import { checkDatabaseName, databaseUrl, dropDatabases, noDelay, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const USAGE = `Usage: node bench/copy-stall.ts [options]

  --rows <list>    rows per statement, comma-separated (default 10,1000,10000)
  --reps <n>       repetitions of each (medians are printed; default 15)
  --db-name <name> database name (default growthdesk_bench_copy_stall); server from BENCH_DATABASE_URL
`
const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10,1000,10000' },
    reps: { type: 'string', default: '15' },
    'db-name': { type: 'string', default: 'growthdesk_bench_copy_stall' },
    help: { type: 'boolean', short: 'h', default: false },
  },
  strict: true,
})
if (args.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const num = numericOption(USAGE, { integer: true })
const sizes = args.rows!.split(',').map((r) => num('rows', r, 1, 1_000_000))
const reps = num('reps', args.reps, 1, 1000)
const dbName = checkDatabaseName(args['db-name']!)
const url = databaseUrl(dbName)
const log = (line = '') => process.stdout.write(`${line}\n`)

interface Row { uuid: string; event: string; distinct_id: string; at: string }
const rowsOf = (n: number): Row[] =>
  Array.from({ length: n }, (_, i) => ({ uuid: randomUUID(), event: i % 10 ? 'daily_use' : 'signup', distinct_id: `user_${i % 500}`, at: new Date(Date.now() - i * 1000).toISOString() }))
const line = (r: Row) => `1\t${r.uuid}\t${r.event}\t${r.distinct_id}\t${r.at}\t${r.at.slice(0, 10)}\t{}\t${r.at}\n`
const COLUMNS = 'project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at'

async function copy(sql: Sql, rows: Row[], oneWrite: boolean): Promise<number> {
  const started = performance.now()
  const stream = await sql.unsafe(`copy stall (${COLUMNS}) from stdin`).writable()
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve)
    stream.on('error', reject)
  })
  if (oneWrite) {
    stream.end(rows.map(line).join(''))
  } else {
    for (let i = 0; i < rows.length; i += 1000) {
      if (!stream.write(rows.slice(i, i + 1000).map(line).join(''))) await new Promise((resolve) => stream.once('drain', resolve))
    }
    stream.end()
  }
  await done
  return performance.now() - started
}

async function unnest(sql: Sql, rows: Row[]): Promise<number> {
  const started = performance.now()
  await sql.unsafe(
    `insert into stall (${COLUMNS})
     select 1, u, e, d, o, o::date, '{}', o from unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[]) as t (u, e, d, o)
     on conflict (project_seq, uuid) do nothing`,
    [rows.map((r) => r.uuid), rows.map((r) => r.event), rows.map((r) => r.distinct_id), rows.map((r) => r.at)]
  )
  return performance.now() - started
}

const pools: Sql[] = []
const cleanup = registerCleanup(async () => {
  for (const p of pools) await p.end({ timeout: 5 }).catch(() => {})
  await dropDatabases([dbName])
})

async function main() {
  log(`copy-stall — PostgreSQL ${await serverVersion()}, Node ${process.version}, load average ${loadAverage()}`)
  await recreateDatabase(dbName)
  const plain = postgres(url, { max: 1, ...quiet })
  const nodelay = postgres(url, { max: 1, ...quiet, ...noDelay(url) })
  // The inserts on connections of their own: a statement sent right after a COPY on the same
  // connection was seen to stall too (~43 ms), which would be charged to the insert.
  const plainInsert = postgres(url, { max: 1, ...quiet })
  const nodelayInsert = postgres(url, { max: 1, ...quiet, ...noDelay(url) })
  pools.push(plain, nodelay, plainInsert, nodelayInsert)
  await plain.unsafe(`create table stall (id bigserial primary key, project_seq int not null, uuid uuid not null, event text not null,
    distinct_id text not null, occurred_at timestamptz not null, day date not null, properties jsonb not null, received_at timestamptz not null,
    unique (project_seq, uuid))`)
  for (const p of [nodelay, plainInsert, nodelayInsert]) await p`select 1`
  const variants: [string, (rows: Row[]) => Promise<number>][] = [
    ['copy', (rows) => copy(plain, rows, false)],
    ['copy+nodelay', (rows) => copy(nodelay, rows, false)],
    ['copy+1write', (rows) => copy(plain, rows, true)],
    ['unnest', (rows) => unnest(plainInsert, rows)],
    ['unnest+nodelay', (rows) => unnest(nodelayInsert, rows)],
  ]
  // One unmeasured round: plans, caches, connections.
  for (const [, run] of variants) await run(rowsOf(100))
  log(`median wall time of ${reps} repetitions, ms (variants alternate within each repetition):`)
  log(`${'rows'.padStart(7)} ${variants.map(([name]) => name.padStart(15)).join(' ')}`)
  for (const n of sizes) {
    const times = new Map<string, number[]>(variants.map(([name]) => [name, []]))
    for (let rep = 0; rep < reps; rep++) {
      for (const [name, run] of rep % 2 ? [...variants].reverse() : variants) times.get(name)!.push(await run(rowsOf(n)))
    }
    log(`${String(n).padStart(7)} ${variants.map(([name]) => median(times.get(name)!).toFixed(1).padStart(15)).join(' ')}`)
  }
  log(`load average after: ${loadAverage()}`)
}

main().then(cleanup, async (err: unknown) => {
  reportFailure('copy-stall', err)
  await cleanup()
  process.exit(1)
})
