// node bench/listing-statement.ts [-- --calls 2000] [--rounds 7] [--db-name growthdesk_bench_listing_statement]
//
// The PostgreSQL CPU of the listing's statement (issue 31: REST list_opportunities with status
// and type, as bench:http calls it), without the server around it: a fresh database, 300
// seed-demo opportunities submitted and reviewed through the tools API (as bench:http loads
// them), `vacuum analyze`; then each variant of the statement run `--calls` times on a
// postgres.js connection of its own as a named statement (so a generic plan after five calls, as
// the app's pool runs it), CPU of that connection's backend from /proc/<pid>/schedstat
// (nanoseconds), variants alternated round by round, medians and the median of the rounds'
// ratios to the first. Variants: the statement as the repository builds it now (its text
// captured from the app's own query log), the statement before the per-row subqueries were
// guarded (its text as it was), and one primary-key lookup of the project (bench:http's
// reference). The database is dropped at the end.
import fs from 'node:fs'
import { parseArgs } from 'node:util'
import postgres from 'postgres'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { demoOpportunities } from '../bin/demo-data.ts'
import { loadAverage, median, numericOption } from './client-process.ts'
import { checkDatabaseName, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const USAGE = `Usage: node bench/listing-statement.ts [options]

  --calls <n>     calls per variant and round (default 2000)
  --rounds <n>    rounds, each running every variant once, alternating (default 7)
  --print         print the listing's statement as the app sends it
  --db-name <s>   the bench database (default growthdesk_bench_listing_statement), dropped at the end
`
const { values: opts } = parseArgs({ options: { calls: { type: 'string' }, rounds: { type: 'string' }, 'db-name': { type: 'string' }, print: { type: 'boolean' }, help: { type: 'boolean' } } })
if (opts.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
const num = numericOption(USAGE, { integer: true })
const CALLS = num('calls', opts.calls ?? '2000', 10, 1_000_000)
const ROUNDS = num('rounds', opts.rounds ?? '7', 1, 100)
const dbName = checkDatabaseName(opts['db-name'] ?? 'growthdesk_bench_listing_statement')
const log = (line: string) => process.stdout.write(`${line}\n`)

const connections: postgres.Sql[] = []
const cleanup = registerCleanup(async () => {
  for (const c of connections) await c.end().catch(() => {})
  await dropDatabases([dbName])
})

/** CPU time of a backend in µs (/proc/<pid>/schedstat: its first field, in ns). */
const backendUs = (pid: number) => Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000

/** The listing statement as it was before its subqueries were guarded (only its tags and assignee columns differ). */
function before(now: string): string {
  const tags = /case when exists \(select 1 from tags pt where pt\.project_id = \$1::text\) then (coalesce\(\(select array_agg.*?\), '\{\}'\)) else '\{\}'::text\[\] end/
  const email = /case when "opportunities"\."assignee_user_id" is null then null else (\(select u\.email from users u where u\.id = "opportunities"\."assignee_user_id"\)) end/
  if (!tags.test(now) || !email.test(now)) throw new Error(`the listing's statement is not the one this bench knows: ${now}`)
  // $1 (the tags' project) goes: the placeholders after it move down by one.
  return now.replace(tags, '$1').replace(email, '$1').replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) - 1}`)
}

/** The statement less one part at a time (each placeholder still used, so that each prepares alike). */
function diagnostics(now: string): { name: string; sql: string }[] {
  const tags = /case when exists \(select 1 from tags pt where pt\.project_id = \$1::text\) then .*? else '\{\}'::text\[\] end/
  const email = /case when "opportunities"\."assignee_user_id" is null then null else \(select u\.email from users u where u\.id = "opportunities"\."assignee_user_id"\) end/
  const total = /\(select coalesce\(sum\("n"\), 0\)::int from "opportunity_counts" where \(.*?\)\)(?= from "opportunities")/
  for (const [name, rx] of [['tags', tags], ['email', email], ['total', total]] as const) {
    if (!new RegExp(rx.source).test(now)) throw new Error(`the listing's statement has no ${name} part this bench knows: ${now}`)
  }
  const noTags = (q: string) => q.replace(tags, "case when $1::text is null then null else '{}'::text[] end")
  const noEmail = (q: string) => q.replace(email, 'null::text')
  const noTotal = (q: string) => q.replace(total, '(select 0 where $2::text is not null and $3::text is not null and $4::text is not null)')
  return [
    { name: 'diagnostic: no tags subquery', sql: noTags(now) },
    { name: 'diagnostic: no email subquery', sql: noEmail(now) },
    { name: 'diagnostic: no total subquery', sql: noTotal(now) },
    { name: 'diagnostic: the scan alone (ids, no subqueries)', sql: now.replace(/^select .*? from "opportunities" where/, 'select "id", $1::text, $2::text, $3::text, $4::text from "opportunities" where') },
  ]
}

async function main() {
  await recreateDatabase(dbName)
  const url = databaseUrl(dbName)
  const statements: string[] = []
  const app = await buildApp({
    config: { ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '0', RATE_LIMIT_CONCURRENCY: '0', WEBHOOKS_ENABLED: 'false', DIGESTS_ENABLED: 'false' }), database: { kind: 'postgres', url, onQuery: (s) => statements.push(s) } },
    logger: false,
  })
  let project: string
  let page: { total: number; items: unknown[] }
  try {
    await app.ready()
    const boot = await bootstrap(app, { workspace: 'growthdesk bench listing statement', email: 'bench-listing@growthdesk.bench', project: 'Listing' })
    project = boot.project.id
    const headers = { authorization: `Bearer ${boot.keys.service}`, 'content-type': 'application/json' }
    const call = async (name: string, args: object) => {
      const res = await app.inject({ method: 'POST', url: `/v1/tools/${name}`, headers, payload: JSON.stringify(args) })
      if (res.statusCode !== 200) throw new Error(`${name}: ${res.statusCode} ${res.body.slice(0, 300)}`)
      return JSON.parse(res.body).result
    }
    const opps = demoOpportunities(project, 300)
    for (let i = 0; i < opps.length; i += 10) {
      await Promise.all(opps.slice(i, i + 10).map(async (o) => {
        const r = await call('submit_opportunity', { project, contribution_type: o.type, key_information: o.lead.info, reason: o.lead.reason, suggested_action: o.lead.action, external_id: `bench-${o.index}` })
        for (const step of o.steps) await call('review_opportunity', { project, event_id: r.event_id, status: step.status, note: step.note, ...(step.evaluation !== undefined ? { evaluation: step.evaluation } : {}) })
      }))
    }
    statements.length = 0
    page = await call('list_opportunities', { project, status: 'pending', type: 'potential_user_opportunity' })
  } finally {
    await app.close()
  }
  const now = statements.find((s) => s.includes('from "opportunities"') && s.includes('limit $'))
  if (!now) throw new Error('the listing statement was not seen')
  if (opts.print) log(now)
  const type = 'potential_user_opportunity'
  const variants = [
    { name: 'listing, now', sql: now, params: [project, project, type, 'pending', project, type, 'pending', 21] },
    { name: 'listing, subqueries unguarded (before)', sql: before(now), params: [project, type, 'pending', project, type, 'pending', 21] },
    { name: 'primary-key lookup (bench:http reference)', sql: 'select id, name, timezone from projects where id = $1', params: [project] },
    // Diagnostics (the same rows, not the same answer): what each part of the statement costs.
    ...diagnostics(now).map((d) => ({ ...d, params: [project, project, type, 'pending', project, type, 'pending', 21] })),
  ]
  const setup = postgres(url, { max: 1, ...quiet })
  connections.push(setup)
  await setup`vacuum analyze`
  const runners = []
  for (const v of variants) {
    const sql = postgres(url, { max: 1, ...quiet, connection: { DateStyle: 'ISO, MDY' } })
    connections.push(sql)
    const pid = (await sql<{ pid: number }[]>`select pg_backend_pid() as pid`)[0]!.pid
    const run = () => sql.unsafe(v.sql, v.params as string[], { prepare: true }).values()
    runners.push({ ...v, pid, run, rows: (await run()).length })
  }
  if (runners[0]!.rows !== runners[1]!.rows || runners[0]!.rows !== Math.min(21, page.total)) throw new Error(`rows: ${runners.map((r) => r.rows).join(', ')} (total ${page.total})`)
  log(`growthdesk bench listing-statement — PostgreSQL ${await serverVersion()}, ${CALLS} calls × ${ROUNDS} rounds per variant, load average ${loadAverage()}`)
  log(`the bench's listing: status pending, one type, ${page.items.length} of ${page.total} opportunities (${runners[0]!.rows} rows read)`)
  const perRound: number[][] = runners.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...runners.keys()].reverse() : [...runners.keys()]
    for (const i of order) {
      const r = runners[i]!
      for (let k = 0; k < 200; k++) await r.run()
      const t0 = backendUs(r.pid)
      for (let k = 0; k < CALLS; k++) await r.run()
      perRound[i]!.push((backendUs(r.pid) - t0) / CALLS)
    }
  }
  log(`load average ${loadAverage()}`)
  log('| statement | PostgreSQL µs/call | × now | rounds |')
  log('| --- | ---: | ---: | --- |')
  runners.forEach((r, i) => {
    const ratio = median(perRound[i]!.map((x, k) => x / perRound[0]![k]!))
    log(`| ${r.name} | ${median(perRound[i]!).toFixed(1)} | ${ratio.toFixed(2)} | ${perRound[i]!.map((x) => x.toFixed(0)).join(' ')} |`)
  })
}

main()
  .catch((err) => {
    reportFailure('bench listing-statement', err)
    process.exitCode = 1
  })
  .finally(() => cleanup())
