// npm run bench:listing [-- --opportunities 100000] [--base <checkout>] [--requests 200] [--keep]
//
// The listing's filters of issue 28 (tag, assignee) on a project of 100 k opportunities, beside
// the listing's older shapes, in one run: a fresh database (BENCH_DATABASE_URL's server, dropped
// first), the bench data of bench/load.ts, tags on ~20 % of the opportunities (`hot` on ~10 %, 9
// others sharing ~10 %, `rare` on ~0.1 %) and assignees on ~30 % (three members, 10 % each), then
// VACUUM ANALYZE. Each shape is read `--requests` times in process (app.inject, sequential,
// after a warm-up) and its p50/p95 printed with the load average. With `--base`, a checkout of
// the branch's base (e.g. `git archive <base> | tar -x -C /tmp/base`, node_modules linked), its
// app is built on the same database too and every shape is measured on both, alternating in
// rounds (shapes the base does not have answer 400 there: "—"). Ends with EXPLAIN ANALYZE of
// the tag and assignee pages as the repository writes them.
import { parseArgs } from 'node:util'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import postgres from 'postgres'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { localDate } from '../core/time.ts'
import { loadOpportunities } from './load.ts'
import { checkDatabaseName, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'

const { values: args } = parseArgs({
  options: {
    opportunities: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '2' },
    base: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'db-name': { type: 'string', default: 'growthdesk_bench_listing' },
  },
})
const N = Number(args.opportunities)
const REQUESTS = Number(args.requests)
const WARMUP = Number(args.warmup)
const ROUNDS = Number(args.rounds)
const name = checkDatabaseName(args['db-name']!)
const url = databaseUrl(name)
const log = (line = '') => process.stdout.write(`${line}\n`)
const loadAverage = () => os.loadavg().map((l) => l.toFixed(2)).join(' / ')
const percentile = (samples: number[], p: number) => [...samples].sort((a, b) => a - b)[Math.max(0, Math.ceil((p / 100) * samples.length) - 1)]!
const ms = (v: number) => (v >= 10 ? v.toFixed(1) : v.toFixed(2))

const apps: FastifyInstance[] = []
const cleanup = registerCleanup(async () => {
  for (const app of apps) await app.close().catch(() => {})
  if (!args.keep) await dropDatabases([name])
})

async function build(appModule: string): Promise<FastifyInstance> {
  const { buildApp: build } = (await import(appModule)) as { buildApp: typeof buildApp }
  const app = await build({
    config: { ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', RATE_LIMIT_CONCURRENCY: '0' }), database: { kind: 'postgres', url }, logLevel: 'warn', webhooks: { enabled: false, allowPrivateNetworks: false } },
    logger: false,
  })
  apps.push(app)
  return app
}

try {
  log(`bench:listing — ${N.toLocaleString('en')} opportunities, PostgreSQL ${await serverVersion()}, Node ${process.version}, ${new Date().toISOString()}`)
  log(`load average at start: ${loadAverage()}`)
  await recreateDatabase(name)
  const app = await build('../app.ts')
  const boot = await bootstrap(app, { workspace: 'listing bench', email: 'bench@listing.test', project: 'Listing bench' })
  const projectId = boot.project.id
  const sql = postgres(url, { max: 2, ...quiet, connection: { synchronous_commit: 'off', work_mem: '256MB' } })
  const now = new Date()
  const started = performance.now()
  await loadOpportunities(sql, { projectId, timeZone: 'UTC', submittedBy: boot.user.id, events: 0, users: 0, days: 90, opportunities: N, now, today: localDate(now, 'UTC') }, 2, 20_000, () => {})
  // Three more members; assignees on ~30 %, tags on ~20 % (each a hash of the row, as load.ts does).
  const members: { id: string; email: string }[] = []
  for (const who of ['ana', 'ben', 'cy']) {
    const user = await app.repos.users.create({ workspaceId: boot.workspace.id, email: `${who}@listing.test`, passwordHash: 'scrypt$1024$8$1$x$y' })
    await app.repos.users.setMembership({ userId: user.id, projectId, role: 'reviewer' })
    members.push({ id: user.id, email: user.email })
  }
  const hash = (seed: number) => `((hashint8extended(hashtext(o.id)::int8, ${seed}) & 9007199254740991)::float8 / 9007199254740992.0)`
  await sql.unsafe(`update opportunities o set assignee_user_id = (array[$1, $2, $3])[1 + floor(${hash(21)} * 10)::int] where o.project_id = $4 and ${hash(21)} < 0.3`, [members[0]!.id, members[1]!.id, members[2]!.id, projectId])
  const tagNames = ['hot', 'rare', ...Array.from({ length: 9 }, (_, i) => `topic ${i}`)]
  await sql.unsafe('insert into tags (id, project_id, name) select \'tag_bench\' || i, $1, n from unnest($2::text[]) with ordinality as x(n, i)', [projectId, tagNames])
  const tagId = (n: string) => `tag_bench${tagNames.indexOf(n) + 1}`
  await sql.unsafe(`
    insert into opportunity_tags (opportunity_id, tag_id, project_id, received_at)
    select o.id, case when ${hash(22)} < 0.1 then '${tagId('hot')}' else 'tag_bench' || (3 + floor(${hash(23)} * 9)::int) end, o.project_id, o.received_at
    from opportunities o where o.project_id = $1 and ${hash(22)} < 0.2
    union all
    select o.id, '${tagId('rare')}', o.project_id, o.received_at from opportunities o where o.project_id = $1 and ${hash(24)} < 0.001`, [projectId])
  await sql.unsafe('vacuum analyze')
  const [facts] = await sql`select (select count(*) from opportunities)::int as n, (select count(*) from opportunity_tags where tag_id = ${tagId('hot')})::int as hot,
    (select count(*) from opportunity_tags where tag_id = ${tagId('rare')})::int as rare, (select count(*) from opportunity_tags)::int as tagged_rows,
    (select count(*) from opportunities where assignee_user_id = ${members[0]!.id})::int as ana, (select count(*) from opportunities where assignee_user_id is null)::int as unassigned`
  log(`loaded in ${((performance.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(facts)}`)

  const key = boot.keys.mcp
  const base = `/api/v1/mcp/projects/${projectId}/opportunities`
  const get = (a: FastifyInstance, query: string) => a.inject({ method: 'GET', url: `${base}?${query}`, headers: { authorization: `Bearer ${key}` } })
  // A cursor deep in each listing (after page 200 of 20, by number), read from this branch's app.
  const cursorAfter = async (query: string, page: number) => (await get(app, `${query}&page=${page}`)).json().next_cursor as string
  const allShapes: [string, string][] = [
    ['plain, page 1', 'page_size=20'],
    ['plain, cursor after page 200', `page_size=20&after=${await cursorAfter('page_size=20', 200)}`],
    ['status=pending', 'status=pending&page_size=20'],
    ['status=pending, cursor after page 100', `status=pending&page_size=20&after=${await cursorAfter('status=pending&page_size=20', 100)}`],
    ['tag=hot (~10 %)', 'tag=hot&page_size=20'],
    ['tag=hot, cursor after page 200', `tag=hot&page_size=20&after=${await cursorAfter('tag=hot&page_size=20', 200)}`],
    ['tag=rare (~0.1 %)', 'tag=rare&page_size=20'],
    ['tag=hot&status=pending', 'tag=hot&status=pending&page_size=20'],
    ['assignee=<email> (~10 %)', `assignee=${members[0]!.email}&page_size=20`],
    ['assignee=<email>, cursor after page 100', `assignee=${members[0]!.email}&page_size=20&after=${await cursorAfter(`assignee=${members[0]!.email}&page_size=20`, 100)}`],
    ['assignee=none (~70 %)', 'assignee=none&page_size=20'],
    ['assignee=<email>&status=pending', `assignee=${members[0]!.email}&status=pending&page_size=20`],
    ['tag=hot&assignee=<email>', `tag=hot&assignee=${members[0]!.email}&page_size=20`],
  ]
  // (A cursor past the end, on a small data set, leaves its shape out.)
  const shapes = allShapes.filter(([, query]) => !query.includes('after=null'))
  const targets: { label: string; app: FastifyInstance }[] = [{ label: 'branch', app }]
  if (args.base) targets.unshift({ label: 'base', app: await build(path.resolve(args.base, 'app.ts')) })
  const samples = new Map<string, number[] | null>()
  for (let round = 0; round < ROUNDS; round++) {
    for (const [label, query] of shapes) {
      for (const target of targets) {
        const id = `${target.label}|${label}`
        const first = await get(target.app, query)
        if (first.statusCode !== 200) {
          samples.set(id, null)
          continue
        }
        for (let i = 0; i < WARMUP; i++) await get(target.app, query)
        const list = samples.get(id) ?? []
        for (let i = 0; i < REQUESTS / ROUNDS; i++) {
          const t0 = performance.now()
          const res = await get(target.app, query)
          list.push(performance.now() - t0)
          if (res.statusCode !== 200) throw new Error(`${label}: ${res.statusCode}`)
        }
        samples.set(id, list)
      }
    }
    log(`round ${round + 1}/${ROUNDS} done, load average ${loadAverage()}`)
  }
  log()
  log(`p50 / p95 in ms over ${REQUESTS} sequential in-process requests each (app.inject), ${ROUNDS} alternating rounds; load average now ${loadAverage()}`)
  log()
  log(`| listing (page_size 20) | total |${targets.map((x) => ` ${x.label} p50 / p95 |`).join('')}`)
  log(`| --- | --- |${targets.map(() => ' --- |').join('')}`)
  for (const [label, query] of shapes) {
    const total = (await get(app, query)).json().total
    const cells = targets.map((x) => {
      const s = samples.get(`${x.label}|${label}`)
      return s ? ` ${ms(percentile(s, 50))} / ${ms(percentile(s, 95))} |` : ' — |'
    })
    log(`| ${label} | ${total.toLocaleString('en')} |${cells.join('')}`)
  }

  // The plans, as the repository writes the statements (a join from opportunity_tags for a tag).
  const explain = async (label: string, text: string, params: unknown[]) => {
    const rows = await sql.unsafe(`explain (analyze, buffers, costs off, timing off, summary on) ${text}`, params as never[])
    log()
    log(`EXPLAIN ${label}:`)
    for (const r of rows) log(`  ${Object.values(r)[0]}`)
  }
  const tagPage = `select o.id from opportunity_tags ot join opportunities o on o.id = ot.opportunity_id
    where ot.tag_id = (select t.id from tags t where t.project_id = $1 and lower(t.name) = lower($2)) and o.project_id = $1 and o.merged_into is null
    order by ot.received_at desc, ot.opportunity_id limit 21`
  await explain('tag=hot, page 1', tagPage, [projectId, 'hot'])
  await explain('tag=hot, total', `select count(*) from opportunity_tags ot join opportunities o on o.id = ot.opportunity_id
    where ot.tag_id = (select t.id from tags t where t.project_id = $1 and lower(t.name) = lower($2)) and o.project_id = $1 and o.merged_into is null`, [projectId, 'hot'])
  await explain('assignee=<email>, page 1', `select o.id from opportunities o where o.project_id = $1 and o.merged_into is null
    and o.assignee_user_id = (select u.id from users u where u.id = $2 or u.email = lower($2)) order by o.received_at desc, o.id limit 21`, [projectId, members[0]!.email])
  await sql.end()
} catch (err) {
  reportFailure('bench:listing', err)
  process.exitCode = 1
} finally {
  await cleanup()
}
