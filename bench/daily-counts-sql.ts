// node bench/daily-counts-sql.ts [--calls 20000] [--rounds 5] [--inflight 5] [--projects 0] [--only a,b]
//
// get_daily_ops' one statement (db/repositories/events.ts, dailyCountsOf) in shapes that answer
// the same, each executed `calls` times as a named statement by postgres.js on a connection of
// its own (as the app's pool does: prepared once per connection, `inflight` calls pipelined),
// against the reference's primary-key lookup of the project. PostgreSQL CPU per call is the
// backend's, from /proc/<pid>/stat; client CPU is this process's. Variants alternate within each
// round (each round starts one variant later); medians over rounds, and each variant's ratio to
// the reference in the same round. Data: bench:http's shape — project A with 31 days of 4 events,
// its finished days folded (shard -1) and today in 16 shards, project B the same unsharded
// (shard 0) — plus `projects` other projects of 90 days each (a larger table). The database is
// dropped at the end.
import { parseArgs } from 'node:util'
import os from 'node:os'
import postgres from 'postgres'
import { openDatabase } from '../db/client.ts'
import { processCpuMs } from './cpu.ts'
import { loadAverage, median, numericOption } from './client-process.ts'
import { checkDatabaseName, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const USAGE = `Usage: node bench/daily-counts-sql.ts [options]

  --calls <n>      calls per variant per round (default 20000)
  --rounds <n>     rounds (default 5)
  --inflight <n>   calls pipelined on the connection (default 5: 50 HTTP connections over a pool of 10)
  --projects <n>   other projects of 90 days of 4 events in the table (default 0)
  --only <list>    variants to run (comma-separated names; the reference and grouped always run)
  --db-name <s>    the bench database (default growthdesk_bench_daily_sql), dropped at the end
`
const { values: opts } = parseArgs({
  options: { calls: { type: 'string' }, rounds: { type: 'string' }, inflight: { type: 'string' }, projects: { type: 'string' }, only: { type: 'string' }, 'db-name': { type: 'string' }, help: { type: 'boolean' } },
})
if (opts.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const num = numericOption(USAGE, { integer: true })
const CALLS = num('calls', opts.calls ?? '20000', 10, 10_000_000)
const ROUNDS = num('rounds', opts.rounds ?? '5', 1, 100)
const INFLIGHT = num('inflight', opts.inflight ?? '5', 1, 100)
const PROJECTS = num('projects', opts.projects ?? '0', 0, 100_000)
const dbName = checkDatabaseName(opts['db-name'] ?? 'growthdesk_bench_daily_sql')
const log = (line: string) => process.stdout.write(`${line}\n`)

const today = new Date().toISOString().slice(0, 10)
/** Days read: from today - 29 to today. */
const DAYS = 30
const from = new Date(Date.parse(today) - (DAYS - 1) * 86_400_000).toISOString().slice(0, 10)
const EVENTS = ['signup', 'daily_use', 'page_view', 'search']
const NAMES = ['signup', 'daily_use']

interface Variant {
  name: string
  /** Connection settings (postgres.js `connection`). */
  connection?: Record<string, string>
  sql: string
  params: (project: string) => unknown[]
  /** The rows as get_daily_ops reads them: [day, event, events, users], sorted. */
  decode: (rows: unknown[][]) => [string, string, number, number][]
}

const asCounts = (rows: unknown[][]) =>
  rows.map(([d, e, n, u]) => [d as string, e as string, Number(n), Number(u)] as [string, string, number, number])

/** Rows summed by (day, event) and sorted: what records() would make of them. */
function summed(rows: [string, string, number, number][]) {
  const by = new Map<string, [string, string, number, number]>()
  for (const [d, e, n, u] of rows) {
    const k = `${d} ${e}`
    const r = by.get(k)
    if (r) {
      r[2] += n
      r[3] += u
    } else by.set(k, [d, e, n, u])
  }
  return [...by.values()].sort((a, b) => (a[0] + a[1] < b[0] + b[1] ? -1 : 1))
}

/** Rows whose day is an offset from `from`. */
const byOffset = (rows: unknown[][]) => asCounts(rows).map(([d, e, n, u]) => [new Date(Date.parse(from) + Number(d) * 86_400_000).toISOString().slice(0, 10), e, n, u] as [string, string, number, number])

const CURRENT = `
  select day::text, event, sum(events), sum(unique_users)
  from daily_event_counts
  where project_id = $1 and day >= $2::date and day <= $3::date
    and event = any($4::text[])
  group by day, event`

const base = { params: (p: string) => [p, from, today, NAMES], decode: asCounts }

/**
 * The months layout's read: the month rows overlapping [from, today] and `unfolded` (the rows not
 * folded yet, each count as a one-element array). A month row's element i is its (i + 1)th day,
 * null where that day has no row ('NULL' as postgres.js reads it in an int8[]).
 */
function months(name: string, unfolded: string): Variant {
  return {
    name,
    sql: `select month - $2::date, event, events, unique_users from daily_event_months
          where project_id = $1 and month >= date_trunc('month', $2::date)::date and month <= $3::date and event = any($4::text[])
          union all ${unfolded}`,
    ...base,
    decode: (rows) => byOffset(rows.flatMap(([start, event, n, u]) => (n as (string | null)[]).flatMap((x, i) => {
      const offset = Number(start) + i
      return x === null || x === 'NULL' || offset < 0 || offset > DAYS - 1 ? [] : [[offset, event, x, (u as string[])[i]]]
    }))),
  }
}

const where = 'project_id = $1 and day >= $2::date and day <= $3::date and event = any($4::text[])'
const VARIANTS: Variant[] = [
  { name: 'grouped', sql: CURRENT, ...base },
  { name: 'generic', sql: CURRENT, connection: { plan_cache_mode: 'force_generic_plan' }, ...base },
  { name: 'custom', sql: CURRENT, connection: { plan_cache_mode: 'force_custom_plan' }, ...base },
  { name: 'int8', sql: `select day::text, event, sum(events)::int8, sum(unique_users)::int8 from daily_event_counts where ${where} group by day, event`, ...base },
  // Diagnostics: what the aggregation, the output and the filter cost.
  { name: 'noagg', sql: `select day::text, event, events, unique_users from daily_event_counts where ${where}`, ...base },
  { name: 'count', sql: `select count(*) from daily_event_counts where ${where}`, ...base, decode: () => [] },
  { name: 'countagg', sql: `select count(*) from (select day, event, sum(events), sum(unique_users) from daily_event_counts where ${where} group by day, event) t`, ...base, decode: () => [] },
  {
    name: 'allevents',
    sql: 'select day::text, event, sum(events), sum(unique_users) from daily_event_counts where project_id = $1 and day >= $2::date and day <= $3::date group by day, event',
    ...base,
    params: (p) => [p, from, today],
    decode: (rows) => asCounts(rows).filter((r) => NAMES.includes(r[1]))
  },
  { name: 'sum8', sql: `select day::text, event, sum8(events), sum8(unique_users) from daily_event_counts where ${where} group by day, event`, ...base },
  { name: 'dayint', sql: `select day - $2::date, event, sum(events), sum(unique_users) from daily_event_counts where ${where} group by day, event`, ...base, decode: byOffset },
  { name: 'sum8dayint', sql: `select day - $2::date, event, sum8(events), sum8(unique_users) from daily_event_counts where ${where} group by day, event`, ...base, decode: byOffset },
  { name: 'rows', sql: `select day - $2::date, event, events, unique_users from daily_event_counts where ${where}`, ...base, decode: byOffset },
  // The same rows in a table whose primary key leads with the event: (project_id, event, day, shard).
  { name: 'evidx', sql: CURRENT.replace('from daily_event_counts', 'from daily_event_counts_ev'), ...base },
  { name: 'evidxbest', sql: `select day - $2::date, event, sum8(events), sum8(unique_users) from daily_event_counts_ev where ${where} group by day, event`, ...base, decode: byOffset },
  // The two names as two parameters (a 2-element array the planner can count): under the generic
  // plan, `event = any($4)` of an array parameter is a filter after the heap fetch, of ARRAY[$4, $5]
  // an index condition of an event-first key.
  { name: 'rows2', sql: 'select day - $2::date, event, events, unique_users from daily_event_counts where project_id = $1 and day >= $2::date and day <= $3::date and event = any(array[$4, $5]::text[])', ...base, params: (p) => [p, from, today, ...NAMES], decode: byOffset },
  { name: 'evrows2', sql: 'select day - $2::date, event, events, unique_users from daily_event_counts_ev where project_id = $1 and day >= $2::date and day <= $3::date and event = any(array[$4, $5]::text[])', ...base, params: (p) => [p, from, today, ...NAMES], decode: byOffset },
  // One row for the whole read: PostgreSQL sends one DataRow instead of one per counter row.
  {
    name: 'onetext',
    sql: `select string_agg(concat_ws(',', day - $2::date, events, unique_users, event), ';') from daily_event_counts where ${where}`,
    ...base,
    decode: (rows) => byOffset(((rows[0]![0] as string | null) ?? '').split(';').filter(Boolean).map((r) => {
      const [d, n, u, ...e] = r.split(',')
      return [Number(d), e.join(','), n, u]
    })),
  },
  {
    name: 'onearrays',
    sql: `select array_agg(day - $2::date), array_agg(event), array_agg(events), array_agg(unique_users) from daily_event_counts where ${where}`,
    ...base,
    decode: (rows) => {
      const [d, e, n, u] = rows[0] as [number[], string[], string[], string[]]
      return byOffset((d ?? []).map((day, i) => [day, e[i]!, n[i], u[i]]))
    },
  },
  { name: 'evcover', sql: `select day - $2::date, event, events, unique_users from daily_event_counts_evc where ${where}`, ...base, decode: byOffset },
  { name: 'evrows', sql: `select day - $2::date, event, events, unique_users from daily_event_counts_ev where ${where}`, ...base, decode: byOffset },
  // Finished days as one row per (month, event) of per-day arrays (daily_event_months, built from
  // the folded rows), and the rows not folded yet (today's shards, late events) as they are, or summed.
  months('months', `select day - $2::date, event, array[events], array[unique_users] from daily_event_counts_m where ${where} and shard <> -1`),
  months('monthsagg', `select day - $2::date, event, array[sum(events)::int8], array[sum(unique_users)::int8] from daily_event_counts_m where ${where} and shard <> -1 group by day, event`),
  {
    name: 'arrays',
    sql: `select array_agg(day::text), array_agg(event), array_agg(e), array_agg(u) from (select day, event, sum(events)::int8 as e, sum(unique_users)::int8 as u from daily_event_counts where ${where} group by day, event) t`,
    ...base,
    decode: (rows) => {
      const [d, e, n, u] = rows[0] as [string[], string[], string[], string[]]
      return d.map((day, i) => [day, e[i]!, Number(n[i]), Number(u[i])])
    },
  },
]

let probe: postgres.Sql | undefined
const clients: postgres.Sql[] = []
const cleanup = registerCleanup(async () => {
  for (const c of clients) await c.end().catch(() => {})
  await probe?.end().catch(() => {})
  await dropDatabases([dbName])
})

async function seed(sql: postgres.Sql) {
  await sql`insert into workspaces (id, name) values ('w_bench', 'bench')`
  await sql`insert into projects (id, workspace_id, slug, name) select 'p_' || i, 'w_bench', 's' || i, 'P' || i from generate_series(0, ${PROJECTS}) i`
  await sql`insert into projects (id, workspace_id, slug, name) values ('A', 'w_bench', 'a', 'A'), ('B', 'w_bench', 'b', 'B')`
  // Others: 90 folded days.
  await sql`
    insert into daily_event_counts (project_id, day, event, shard, events, unique_users)
    select 'p_' || i, ${today}::date - d, e, -1, 100 + d, 40 + d
    from generate_series(1, ${PROJECTS}) i, generate_series(1, 90) d, unnest(${EVENTS}::text[]) e`
  // A: finished days folded, today in 16 shards (sums as B's).
  await sql`
    insert into daily_event_counts (project_id, day, event, shard, events, unique_users)
    select 'A', ${today}::date - d, e, -1, 100 + d, 40 + d from generate_series(1, 30) d, unnest(${EVENTS}::text[]) e`
  await sql`
    insert into daily_event_counts (project_id, day, event, shard, events, unique_users)
    select 'A', ${today}::date, e, s, case when s = 0 then 100 - 15 * 6 else 6 end, case when s = 0 then 40 - 15 * 2 else 2 end
    from generate_series(0, 15) s, unnest(${EVENTS}::text[]) e`
  await sql`
    insert into daily_event_counts (project_id, day, event, shard, events, unique_users)
    select 'B', ${today}::date - d, e, 0, 100 + d, 40 + d from generate_series(0, 30) d, unnest(${EVENTS}::text[]) e`
  await sql`create table daily_event_counts_ev (like daily_event_counts including defaults, primary key (project_id, event, day, shard))`
  await sql`insert into daily_event_counts_ev select * from daily_event_counts`
  // And with the counts in the index too (INCLUDE): an index-only scan where the visibility map allows.
  await sql`create table daily_event_counts_evc (like daily_event_counts including defaults, primary key (project_id, event, day, shard) include (events, unique_users))`
  await sql`insert into daily_event_counts_evc select * from daily_event_counts`
  // The months layout: its own copy of the counters, B's finished days folded too (as the fold
  // would have), and the folded rows as one row per (project, month, event) of per-day arrays
  // (element d = the month's day d, null where no row).
  await sql`create table daily_event_counts_m (like daily_event_counts including all)`
  await sql`insert into daily_event_counts_m (project_id, day, event, shard, events, unique_users) select project_id, day, event, case when project_id = 'B' and day < ${today}::date then -1 else shard end, events, unique_users from daily_event_counts`
  await sql`create table daily_event_months (project_id text not null, month date not null, event text not null, events int8[] not null, unique_users int8[] not null, primary key (project_id, month, event))`
  await sql`
    insert into daily_event_months
    select k.project_id, k.month, k.event, a.events, a.unique_users
    from (select distinct project_id, event, date_trunc('month', day)::date as month from daily_event_counts_m where shard = -1) k,
    lateral (select array_agg(c.events order by d) as events, array_agg(c.unique_users order by d) as unique_users
             from generate_series(1, extract(day from k.month + interval '1 month' - interval '1 day')::int) d
             left join daily_event_counts_m c on c.project_id = k.project_id and c.event = k.event and c.shard = -1 and c.day = k.month + d - 1) a`
  await sql`vacuum analyze daily_event_counts_m, daily_event_months`
  await sql`create aggregate sum8(int8) (sfunc = int8pl, stype = int8)`
  await sql`vacuum analyze daily_event_counts, daily_event_counts_ev, daily_event_counts_evc, projects`
}

async function main() {
  await recreateDatabase(dbName)
  const url = databaseUrl(dbName)
  const database = await openDatabase({ kind: 'postgres', url })
  await database.migrate()
  await database.close()
  probe = postgres(url, { max: 1, ...quiet })
  await seed(probe)

  const only = opts.only ? new Set(opts.only.split(',')) : undefined
  const variants = VARIANTS.filter((v) => !only || only.has(v.name) || v.name === 'grouped') // the former shape: the baseline, always
  const reference: Variant = { name: 'reference (pk lookup)', sql: 'select id, name, timezone from projects where id = $1', params: (p) => [p], decode: () => [] }
  const all = [reference, ...variants]
  const conns = new Map<Variant, { sql: postgres.Sql; pid: number }>()
  for (const v of all) {
    const sql = postgres(url, { max: 1, ...quiet, connection: { application_name: 'growthdesk', DateStyle: 'ISO, MDY', ...v.connection } })
    clients.push(sql)
    const pid = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid
    conns.set(v, { sql, pid })
  }
  // The same answer from every variant, for A and B.
  const answer = async (v: Variant, p: string) => JSON.stringify(summed(v.decode(await conns.get(v)!.sql.unsafe(v.sql, v.params(p) as never[], { prepare: true }).values())))
  const expected = await answer(VARIANTS[0]!, 'B')
  for (const v of variants) {
    if (v.name.startsWith('count')) continue
    for (const p of ['A', 'B']) {
      const got = await answer(v, p)
      if (got !== expected) throw new Error(`${v.name} on ${p} answers differently:\n${got}\n${expected}`)
    }
  }

  async function measure(v: Variant, project: string) {
    const { sql, pid } = conns.get(v)!
    const params = v.params(project) as never[]
    const run = () => sql.unsafe(v.sql, params, { prepare: true }).values()
    for (let i = 0; i < 200; i++) await run()
    const db0 = processCpuMs(pid)!
    const c0 = process.cpuUsage()
    let started = 0
    await Promise.all(Array.from({ length: INFLIGHT }, async () => {
      while (started < CALLS) {
        started++
        await run()
      }
    }))
    const c = process.cpuUsage(c0)
    return { db: ((processCpuMs(pid)! - db0) * 1000) / CALLS, client: ((c.user + c.system) / 1000 / CALLS) * 1000 }
  }

  log(`growthdesk bench daily-counts-sql — PostgreSQL ${await serverVersion()}, ${os.cpus().length} CPUs, Node ${process.version}; ` +
    `${CALLS} calls × ${ROUNDS} rounds, ${INFLIGHT} in flight; ${PROJECTS} other projects; load average ${loadAverage()}`)
  const scenarios = [{ v: reference, p: 'A', key: reference.name }, ...variants.flatMap((v) => [{ v, p: 'A', key: `${v.name} A` }, { v, p: 'B', key: `${v.name} B (flat)` }])]
  const per: Record<string, { db: number; client: number }[]> = {}
  for (let r = 0; r < ROUNDS; r++) {
    const order = scenarios.map((_, i) => scenarios[(i + r) % scenarios.length]!)
    for (const s of order) (per[s.key] ??= []).push(await measure(s.v, s.p))
    log(`round ${r + 1}: load average ${loadAverage()}`)
  }
  const ratio = (a: string, k: 'db' | 'client') => median(per[a]!.map((x, i) => x[k] / per[reference.name]![i]![k]))
  log('\n| statement | PostgreSQL µs/call | client µs/call | PostgreSQL × ref | client × ref | PostgreSQL × flat |')
  log('| --- | ---: | ---: | ---: | ---: | ---: |')
  for (const s of scenarios) {
    const m = per[s.key]!
    const flat = s.key.endsWith(' A') ? s.key.replace(/ A$/, ' B (flat)') : undefined
    const flatRatio = flat ? median(m.map((x, i) => x.db / per[flat]![i]!.db)).toFixed(2) : ''
    log(`| ${s.key} | ${median(m.map((x) => x.db)).toFixed(1)} | ${median(m.map((x) => x.client)).toFixed(1)} | ${ratio(s.key, 'db').toFixed(2)} | ${ratio(s.key, 'client').toFixed(2)} | ${flatRatio} |`)
  }
  log(`load average at the end: ${loadAverage()}`)
}

main()
  .catch((err) => {
    reportFailure('bench daily-counts-sql', err)
    process.exitCode = 1
  })
  .finally(() => cleanup())
