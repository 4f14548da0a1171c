// node bench/ingest-steps.ts [--events 40000] [--rounds 3] [--variants a,b,…] [--clients 1]
//
// Issue 31: what each step of the ingest statement costs PostgreSQL. The same new events (the
// distribution of bench/ingest.ts: 200,000 users, skewed, 48 h) are ingested in batches of 1000
// by variants of the statement, alternating variants within each round, each from empty tables;
// reported: the backends' CPU per 1000 events (/proc/<pid>/stat) and wall time, medians of rounds.
// The variants: the statement as it ships, and every /tmp/gdsteps/<name>.sql (its text with steps
// removed or changed; $1 the project id, $2 the batch as JSON text, $3 now). --explain prints the
// plan of one more batch after each variant's first round. Database gd_ingest_floor_steps (dropped).
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
import { databaseUrl, dropDatabases, quiet, recreateDatabase } from './database.ts'

const { values: args } = parseArgs({
  options: {
    events: { type: 'string', default: '40000' },
    rounds: { type: 'string', default: '3' },
    clients: { type: 'string', default: '1' },
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

const users = 200_000
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

type Variant = { name: string; sql: string; params: (projectId: string, batch: ReturnType<typeof makeEvents>) => unknown[] }
// The statement as it ships, its parameters renumbered: $1 project, $2 payload, $3 now.
const shipped = INGEST_SQL.replace(/\$(\d+)/g, (_, n: string) => ({ 2: '$2', 4: '$3', 7: "'daily_use'" })[n] ?? '$1')
const variants: Variant[] = [{ name: 'shipped', sql: shipped, params: (p, b) => [p, JSON.stringify(b), new Date().toISOString()] }]
// Extra variants from files /tmp/gdsteps/<name>.sql, same parameters ($1 project, $2 payload, $3 now).
for (const f of fs.existsSync('/tmp/gdsteps') ? fs.readdirSync('/tmp/gdsteps').sort() : []) {
  if (f.endsWith('.sql')) variants.push({ name: f.slice(0, -4), sql: fs.readFileSync(`/tmp/gdsteps/${f}`, 'utf8'), params: (p, b) => [p, JSON.stringify(b), new Date().toISOString()] })
}
const chosen = args.variants ? variants.filter((v) => args.variants!.split(',').includes(v.name)) : variants

async function main() {
  await recreateDatabase(dbName)
  const tmp = fs.mkdtempSync('/tmp/gd-steps-')
  const local = await buildApp({ config: loadConfig({ DATABASE_URL: url, DATA_DIR: tmp, LOG_LEVEL: 'silent' }), logger: false })
  const boot = await bootstrap(local, { workspace: 'steps', email: 'steps@growthdesk.bench', project: 'Steps' }).finally(() => local.close())
  const projectId = boot.project.id
  const sql: Sql = postgres(url, { max: clients, ...quiet })
  log(`project ${projectId}`)
  await sql`select events_ensure_partitions((now() - interval '40 days')::date, (now() + interval '40 days')::date)`
  const result = new Map<string, { cpu: number[]; wall: number[] }>()
  for (let round = 1; round <= rounds; round++) {
    const evs = makeEvents(eventCount)
    const batches: ReturnType<typeof makeEvents>[] = []
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
          await sql.unsafe(v.sql, v.params(projectId, b) as never[])
        }
      }))
      const wall = performance.now() - t0
      const after = pids.map(cpuMs)
      const cpu = after.reduce((s, x, i) => s + x - before[i]!, 0)
      if (args.explain && round === 1) {
        // One more batch of new events, on the tables as this run left them, explained.
        const plan = await sql.unsafe(`explain (analyze, buffers, verbose off) ${v.sql}`, v.params(projectId, makeEvents(1000)) as never[])
        log(`  plan of ${v.name}:\n${plan.map((r) => r['QUERY PLAN']).join('\n')}`)
      }
      const r = result.get(v.name) ?? { cpu: [], wall: [] }
      r.cpu.push(cpu / (eventCount / 1000))
      r.wall.push(wall / (eventCount / 1000))
      result.set(v.name, r)
      log(`  round ${round} ${v.name}: ${(cpu / (eventCount / 1000)).toFixed(1)} ms CPU / 1000 events, ${(wall / (eventCount / 1000)).toFixed(1)} ms wall; load ${os.loadavg()[0]!.toFixed(2)}`)
    }
  }
  const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!
  const ref = med(result.get(chosen[0]!.name)!.cpu)
  for (const [name, r] of result) log(`${name}: median ${med(r.cpu).toFixed(1)} ms PG CPU / 1000 events (${(med(r.cpu) / ref).toFixed(2)}×), ${med(r.wall).toFixed(1)} ms wall`)
  await sql.end()
  await dropDatabases([dbName])
}
main().catch(async (e) => { console.error(e); await dropDatabases([dbName]); process.exit(1) })
