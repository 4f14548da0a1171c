// node bench/ingest-steps.ts [--events 40000] [--rounds 3] [--variants a,b,…] [--clients 1] [--users 200000] [--explain]
//
// Issue 31: what each step of the ingest statement costs PostgreSQL. The same new events (the
// distribution of bench/ingest.ts: `--users` 200,000 users, skewed, 48 h) are ingested in batches of 1000
// by variants of the statement, alternating variants within each round, each from empty tables;
// reported: the backends' CPU per 1000 events (/proc/<pid>/stat) and wall time, medians of rounds.
// The variants: the statement as it ships; `staged`, item 6's other feed: in one transaction the
// batch COPYed into a temporary table (ON COMMIT DELETE ROWS, made once per connection) and the
// same statement reading it instead of jsonb_to_recordset (postgres.js on a no-delay socket,
// bench/database.ts: the COPY stall); `staged-events`, the same feed into the events alone, and
// `floor`, the idempotent floor's unnest insert into the events alone (what the rollups are
// measured against); `upto-ins`, `upto-firsts`, `upto-active`, `upto-queued`, `upto-counted`, the
// shipped statement cut after that step (the last one leaves out only project_event_stats), so
// that each step's cost is the difference from the one before; and every /tmp/gdsteps/<name>.sql (the statement's text with steps removed or
// changed; $1 the project id, $2 the batch as JSON text, $3 now). --explain prints the plan of one
// more batch after each statement variant's first round. Database gd_ingest_floor_steps (dropped).
import { parseArgs } from 'node:util'
import { performance } from 'node:perf_hooks'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import postgres, { type Sql } from 'postgres'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { INGEST_SQL } from '../db/repositories/events.ts'
import { copyField, databaseUrl, dropDatabases, noDelay, quiet, recreateDatabase } from './database.ts'

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '1' },
    users: { type: 'string', default: '200000' },
    variants: { type: 'string' },
    explain: { type: 'boolean', default: false },
    'db-name': { type: 'string', default: 'gd_ingest_floor_steps' },
  },
})
const eventCount = Number(args.events)
const rounds = Number(args.rounds)
const clients = Number(args.clients)
const dbName = args['db-name']!
const url = databaseUrl(dbName)
const log = (s = '') => process.stdout.write(`${s}\n`)

const users = Number(args.users)
function makeEvents(n: number) {
  const now = Date.now()
  const out: { uuid: string; distinct_id: string; timestamp: string; event: string; properties?: Record<string, unknown> }[] = []
  for (let i = 0; i < n; i++) {
    const r = Math.random()
    let kind: { event: string; properties?: Record<string, unknown> } = { event: 'daily_use' }
    if (r >= 0.99) kind = { event: 'purchase', properties: { amount_cents: 500 + Math.floor(Math.random() * 50) * 100, currency: 'USD' } }
    else if (r >= 0.965) kind = { event: 'invite_sent' }
    else if (r >= 0.9) kind = { event: 'page_view', properties: { path: `/docs/${Math.floor(Math.random() * 40)}` } }
    out.push({ uuid: randomUUID(), distinct_id: `user_${Math.floor(users * Math.random() ** 2)}`, timestamp: new Date(now - Math.floor(Math.random() * 48 * 3600_000)).toISOString(), ...kind })
  }
  return out
}

function cpuMs(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(f[11]) + Number(f[12])) * 10
}

type Batch = ReturnType<typeof makeEvents>
type Variant = {
  name: string
  sql: string
  params: (projectId: string, batch: Batch) => unknown[]
  /** Runs one batch itself (the staged variants); otherwise `sql` with `params`. */
  run?: (sql: Sql, projectId: string, batch: Batch) => Promise<unknown>
}
// The statement as it ships, its parameters renumbered: $1 project, $2 payload, $3 now.
const shipped = INGEST_SQL.replace(/\$(\d+)/g, (_, n: string) => ({ 2: '$2', 4: '$3', 7: "'daily_use'" })[n] ?? '$1')
const jsonParams = (p: string, b: Batch) => [p, JSON.stringify(b), new Date().toISOString()]

// The staged feed: the batch as COPY text (tab-separated; backslash, tab, newline and CR escaped).
const STAGE = 'create temp table if not exists ingest_stage (uuid uuid, event text, distinct_id text, timestamp timestamptz, properties jsonb) on commit delete rows'
const copyText = (b: Batch) => b.map((e) => `${e.uuid}\t${copyField(e.event)}\t${copyField(e.distinct_id)}\t${e.timestamp}\t${e.properties ? copyField(JSON.stringify(e.properties)) : '\\N'}\n`).join('')
const FROM_JSON = /jsonb_to_recordset\(\$2::text::jsonb\)\s*as x\(uuid uuid, event text, distinct_id text, timestamp timestamptz, properties jsonb\)/
if (!FROM_JSON.test(shipped)) throw new Error('the shipped statement no longer reads jsonb_to_recordset as this bench expects')
const stagedSql = shipped.replace(FROM_JSON, 'ingest_stage as x').replace(/\$3/g, '$2')
/** A batch COPYed into the temporary table, then `statement` ($1 project, $2 now) in the same transaction. */
const staged = (statement: string) => async (sql: Sql, projectId: string, batch: Batch) => {
  await sql.begin(async (tx) => {
    await tx.unsafe(STAGE)
    const w = await tx.unsafe('copy ingest_stage from stdin').writable()
    await new Promise<void>((resolve, reject) => w.end(copyText(batch), (err?: Error | null) => (err ? reject(err) : resolve())))
    await tx.unsafe(statement, [projectId, new Date().toISOString()])
  })
}
const STAGED_EVENTS = `insert into events (project_id, project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at)
  select $1, p.seq, x.uuid, x.event, x.distinct_id, x.timestamp, (x.timestamp at time zone p.timezone)::date, coalesce(x.properties, '{}'::jsonb), $2::timestamptz
  from ingest_stage x, (select seq, timezone from projects where id = $1) p order by x.uuid
  on conflict (project_seq, uuid, day) do nothing`
const FLOOR = `insert into events (project_id, project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at)
  select $1, p.seq, x.uuid, x.event, x.distinct_id, x.ts, (x.ts at time zone p.timezone)::date, coalesce(x.props, '{}'::jsonb), $7::timestamptz
  from unnest($2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::jsonb[]) as x(uuid, event, distinct_id, ts, props),
       (select seq, timezone from projects where id = $1) p order by x.uuid
  on conflict (project_seq, uuid, day) do nothing`
/**
 * The statement cut after a step: its data-modifying CTEs up to `last` (each runs whether or not
 * it is read), then a count of the events stored. `upto-ins` … `upto-counted`: what each step adds.
 */
function upTo(last: string): string {
  const [head, ...ctes] = shipped.split(/\n\s*(?=[a-z]+ as \()/)
  const name = (cte: string) => /^([a-z]+) as \(/.exec(cte)![1]!
  const end = ctes.findIndex((cte) => name(cte) === last)
  if (end < 0) throw new Error(`the shipped statement has no step ${last}`)
  const kept = ctes.slice(0, end + 1).map((cte) => cte.replace(/\n\s*select \(select count\(\*\) from ins\)[\s\S]*$/, '').replace(/\),?\s*$/, ')'))
  const reads = kept.map(name).filter((n) => !['input', 'ins', 'batch'].includes(n)).map((n) => ` + 0 * (select count(*) from ${n})::int`).join('')
  return `${head}\n${kept.join(',\n')}\nselect ((select count(*) from ins)::int${reads}) as accepted`
}
const STEPS = ['ins', 'firsts', 'active', 'queued', 'counted']
const variants: Variant[] = [
  { name: 'shipped', sql: shipped, params: jsonParams },
  ...STEPS.map((step) => ({ name: `upto-${step}`, sql: upTo(step), params: jsonParams })),
  { name: 'staged', sql: stagedSql, params: jsonParams, run: staged(stagedSql) },
  { name: 'staged-events', sql: STAGED_EVENTS, params: jsonParams, run: staged(STAGED_EVENTS) },
  {
    name: 'floor',
    sql: FLOOR,
    params: (p, b) => [p, b.map((e) => e.uuid), b.map((e) => e.event), b.map((e) => e.distinct_id), b.map((e) => e.timestamp), b.map((e) => (e.properties ? JSON.stringify(e.properties) : null)), new Date().toISOString()],
  },
]
// Extra variants from files /tmp/gdsteps/<name>.sql, same parameters ($1 project, $2 payload, $3 now).
for (const f of fs.existsSync('/tmp/gdsteps') ? fs.readdirSync('/tmp/gdsteps').sort() : []) {
  if (f.endsWith('.sql')) variants.push({ name: f.slice(0, -4), sql: fs.readFileSync(`/tmp/gdsteps/${f}`, 'utf8'), params: jsonParams })
}
const chosen = args.variants ? variants.filter((v) => args.variants!.split(',').includes(v.name)) : variants

async function main() {
  await recreateDatabase(dbName)
  const tmp = fs.mkdtempSync('/tmp/gd-steps-')
  const local = await buildApp({ config: loadConfig({ DATABASE_URL: url, DATA_DIR: tmp, LOG_LEVEL: 'silent' }), logger: false })
  const boot = await bootstrap(local, { workspace: 'steps', email: 'steps@growthdesk.bench', project: 'Steps' }).finally(() => local.close())
  const projectId = boot.project.id
  const sql: Sql = postgres(url, { max: clients, ...quiet, ...noDelay(url) })
  log(`project ${projectId}`)
  await sql`select events_ensure_partitions((now() - interval '40 days')::date, (now() + interval '40 days')::date)`
  const result = new Map<string, { cpu: number[]; wall: number[] }>()
  for (let round = 1; round <= rounds; round++) {
    const evs = makeEvents(eventCount)
    const batches: Batch[] = []
    for (let i = 0; i < evs.length; i += 1000) batches.push(evs.slice(i, i + 1000))
    for (const v of round % 2 ? chosen : [...chosen].reverse()) {
      await sql.unsafe('truncate events, daily_event_users, daily_event_counts, user_activity, user_activity_days, project_event_stats, retention_queue')
      await sql.unsafe('checkpoint')
      const pids = (await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${dbName}`).map((r) => r.pid)
      // warm every connection (plans, catalog caches)
      const before = pids.map(cpuMs)
      const t0 = performance.now()
      let next = 0
      await Promise.all(Array.from({ length: clients }, async () => {
        while (next < batches.length) {
          const b = batches[next++]!
          await (v.run ? v.run(sql, projectId, b) : sql.unsafe(v.sql, v.params(projectId, b) as never[]))
        }
      }))
      const wall = performance.now() - t0
      const after = pids.map(cpuMs)
      const cpu = after.reduce((s, x, i) => s + x - before[i]!, 0)
      if (args.explain && round === 1 && !v.run) {
        // One more batch of new events, on the tables as this run left them, explained.
        const plan = await sql.unsafe(`explain (analyze, buffers, verbose off) ${v.sql}`, v.params(projectId, makeEvents(1000)) as never[])
        log(`  plan of ${v.name}:\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`)
      }
      const r = result.get(v.name) ?? { cpu: [], wall: [] }
      r.cpu.push(cpu / (eventCount / 1000))
      r.wall.push(wall / (eventCount / 1000))
      result.set(v.name, r)
      // The per-row writes of the rollups, per 1000 events: first sightings and users with a last active day.
      const [rows] = await sql<{ firsts: number; users: number }[]>`select (select count(*) from daily_event_users)::int as firsts, (select count(*) from user_activity)::int as users`
      const per1000 = (n: number) => Math.round(n / (eventCount / 1000))
      log(`  round ${round} ${v.name}: ${(cpu / (eventCount / 1000)).toFixed(1)} ms CPU / 1000 events, ${(wall / (eventCount / 1000)).toFixed(1)} ms wall; ` +
        `${per1000(rows!.firsts)} first sightings and ${per1000(rows!.users)} active users / 1000 events; load ${os.loadavg()[0]!.toFixed(2)}`)
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
  const ref = med(result.get(chosen[0]!.name)!.cpu)
  for (const [name, r] of result) log(`${name}: median ${med(r.cpu).toFixed(1)} ms PG CPU / 1000 events (${(med(r.cpu) / ref).toFixed(2)}×), ${med(r.wall).toFixed(1)} ms wall`)
  await sql.end()
  await dropDatabases([dbName])
}
main().catch(async (e) => { console.error(e); await dropDatabases([dbName]); process.exit(1) })
