// npm run bench:submit [-- --rows 100000] [--calls 200] [--queries 10] [--data template|realistic]
//
// --data template (default): bench/load.ts's texts, adversarial (10% of the corpus half-alike to
// any text). --data realistic: the same rows, their key_information then replaced by 8–30 words
// drawn (skewed towards the frequent) from the demo texts' words plus 5,000 made-up ones, 1% of
// them a copy of another row's text with one word changed; half the submitted texts are then a
// stored text with one word changed, and the bench counts how often its original comes first.
//
// What answering `similar` costs a submission (issue 28): a database with `--rows` opportunities
// in one project (bench/load.ts's generated texts: 1,000 phrasings, each with its own thread
// number, so every text has hundreds of near-twins), then `--calls` submissions with the
// similarity query and as many without it (SIMILAR.atSubmitEnabled off), interleaved one by one,
// over the tools REST route in this process (app.inject). Half the submitted texts (each way) are demo
// texts with one word changed (few look alike), half are like the stored ones (hundreds do).
// Prints p50/p95 of both and the ratio of p50s (goal ≤ 2), the load average, and side by side
// on the same rows the two candidate queries alone: the shipped one (pg_trgm similarity ranked on
// MinHash band candidates, db/repositories/opportunities.ts) and full-text ranking with OR-ed
// terms (bench/similarity.ts compares their quality). Embedded PGlite (a temporary folder) by default; with DATABASE_URL, a fresh database
// `growthdesk_bench_similar` on that PostgreSQL server, dropped afterwards.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import postgres, { type Sql } from 'postgres'
import { buildApp } from '../app.ts'
import { loadConfig, type Database } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { DEMO_POOLS } from '../bin/demo-data.ts'
import { SIMILAR } from '../db/repositories/opportunities.ts'
import { localDate } from '../core/time.ts'
import { loadOpportunities } from './load.ts'
import { loadAverage } from './client-process.ts'

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    calls: { type: 'string', default: '200' },
    queries: { type: 'string', default: '10' },
    data: { type: 'string', default: 'template' },
  },
  strict: true,
})
const rows = Number(args.rows)
const calls = Number(args.calls)
/** How many texts the two queries alone are timed on (full-text ranking takes seconds each at 100k). */
const queries = Number(args.queries)
const url = process.env.DATABASE_URL
const DB_NAME = 'growthdesk_bench_similar'

let database: Database
let tmpDir: string | undefined
let admin: Sql | undefined
if (url) {
  admin = postgres(url, { max: 1, onnotice: () => {} })
  await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`)
  await admin.unsafe(`create database ${DB_NAME}`)
  const u = new URL(url)
  u.pathname = `/${DB_NAME}`
  database = { kind: 'postgres', url: u.toString() }
} else {
  tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'growthdesk-bench-similar-'))
  database = { kind: 'pglite', dataDir: tmpDir, sync: false }
}

const t0 = performance.now()
const app = await buildApp({
  config: { ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '0', RATE_LIMIT_CONCURRENCY: '0' }), database, logLevel: 'warn' },
  logger: false,
})
try {
  const boot = await bootstrap(app, { workspace: 'growthdesk bench', email: 'bench@growthdesk.bench', project: 'Bench project' })
  const now = new Date()
  // bench/load.ts's loader speaks postgres.js; PGlite's client takes the same text and parameters.
  const client = (app.db as unknown as { $client: { unsafe?: Sql['unsafe']; query?(text: string, params: unknown[]): Promise<unknown> } }).$client
  const loader = { unsafe: (text: string, params: unknown[]) => (client.unsafe ? client.unsafe(text, params as never[]) : client.query!(text, params)) } as unknown as Sql
  await loadOpportunities(loader, { projectId: boot.project.id, timeZone: 'UTC', submittedBy: boot.user.id, events: 0, users: 0, days: 90, opportunities: rows, now, today: localDate(now, 'UTC') }, 1, 20_000, () => {})
  if (args.data === 'realistic') {
    const vocabulary = [...new Set(Object.values(DEMO_POOLS).flat().flatMap((l) => l.info.toLowerCase().match(/[a-z0-9]+/g) ?? []))]
    await loader.unsafe(`
      with v as (select $2::text[] || array(select substr(md5('w' || i), 1, 3 + i % 8) from generate_series(1, 5000) i) as w)
      update opportunities o set key_information = (
        select string_agg(v.w[1 + floor(power(((hashint8extended(g.n * 131 + k, 7) & 9007199254740991)::float8 / 9007199254740992.0), 2) * cardinality(v.w))::int], ' ' order by k)
        from generate_series(1, 8 + (g.n % 23)) k)
      from v, (select id, row_number() over (order by id) as n from opportunities where project_id = $1) g
      where o.id = g.id`, [boot.project.id, vocabulary])
    // 1% genuine near-duplicates: another row's text with its third word changed.
    await loader.unsafe(`
      update opportunities o set key_information = regexp_replace(s.key_information, '^(\\S+ \\S+ )\\S+', '\\1dup' || g.n)
      from (select id, row_number() over (order by id) as n from opportunities where project_id = $1) g
      join lateral (select key_information from opportunities x where x.id = (select id from opportunities order by id offset (g.n * 7919) % 1000 limit 1)) s on true
      where o.id = g.id and g.n % 100 = 0`, [boot.project.id])
  }
  await loader.unsafe('analyze opportunities', [])
  console.log(`${database.kind}, data ${args.data}: ${rows.toLocaleString('en')} opportunities loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s (with the app's start)`)

  const demo = Object.values(DEMO_POOLS).flat().map((l) => l.info)
  const stored = ['A founder on Reddit asks for an easier way to track daily active users (thread 7, 12 upvotes).',
    'A marketer on LinkedIn compares analytics tools for a small SaaS business.',
    'A developer on GitHub Discussions wants an MCP server for their product metrics and dashboards.']
  // Realistic data: stored texts (with their ids) to submit with one word changed.
  const originals = args.data === 'realistic'
    ? (await loader.unsafe('select id, key_information from opportunities where project_id = $1 order by md5(id) limit 2000', [boot.project.id]) as unknown)
    : []
  const originalRows = (Array.isArray(originals) ? originals : (originals as { rows: unknown[] }).rows) as { id: string; key_information: string }[]
  const originalOf = new Map<string, string>()
  /**
   * The i-th submitted text: a demo text with its longest word changed, or (every other pair, so
   * both ways get both kinds) one like the stored ones (realistic: a stored one with a word changed).
   */
  const alike = (i: number) => Boolean((i >> 1) % 2)
  const textOf = (i: number) => {
    if (alike(i) && originalRows.length) {
      const o = originalRows[i % originalRows.length]!
      const words = o.key_information.split(' ')
      words[Math.floor(words.length / 2)] = `changed${i}`
      const text = words.join(' ')
      originalOf.set(text, o.id)
      return text
    }
    if (alike(i)) return `${stored[i % stored.length]} #${i}`
    const words = demo[i % demo.length]!.split(' ')
    const j = words.reduce((best, w, k) => (w.length > words[best]!.length ? k : best), 0)
    words[j] = `changed${i}`
    return words.join(' ')
  }
  const key = boot.keys.service
  const submit = async (i: number) => {
    const started = performance.now()
    const res = await app.inject({
      method: 'POST',
      url: '/v1/tools/submit_opportunity',
      headers: { authorization: `Bearer ${key}` },
      payload: { project: boot.project.id, contribution_type: 'potential_user_opportunity', key_information: textOf(i), reason: 'Bench', suggested_action: 'Look' },
    })
    const ms = performance.now() - started
    if (res.statusCode !== 200) throw new Error(`submit: ${res.statusCode} ${res.body}`)
    const similar = res.json().result.similar as { event_id: string }[]
    const original = originalOf.get(textOf(i))
    return { ms, similar: similar.length, originalFirst: original === undefined ? undefined : similar[0]?.event_id === original }
  }
  // Warm-up: statements prepared, caches filled.
  for (let i = 0; i < 20; i++) await submit(i)
  const withSimilar: number[] = []
  const without: number[] = []
  const found: number[] = []
  const firsts: boolean[] = []
  const withAlike: number[] = []
  for (let i = 0; i < calls; i++) {
    SIMILAR.atSubmitEnabled = true
    const a = await submit(1000 + 2 * i)
    withSimilar.push(a.ms)
    if (alike(1000 + 2 * i)) withAlike.push(a.ms)
    found.push(a.similar)
    if (a.originalFirst !== undefined) firsts.push(a.originalFirst)
    SIMILAR.atSubmitEnabled = false
    without.push((await submit(1001 + 2 * i)).ms)
  }
  SIMILAR.atSubmitEnabled = true

  const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!
  const f = (x: number) => x.toFixed(2).padStart(8)
  console.log(`\n${calls} submissions each way, interleaved (ms, app.inject, one at a time):`)
  console.log(`${''.padEnd(28)}      p50      p95`)
  console.log(`${'submit with similar'.padEnd(28)} ${f(pct(withSimilar, 0.5))} ${f(pct(withSimilar, 0.95))}`)
  console.log(`${'submit without similar'.padEnd(28)} ${f(pct(without, 0.5))} ${f(pct(without, 0.95))}`)
  console.log(`${'  of which like stored ones'.padEnd(28)} ${f(pct(withAlike, 0.5))} ${f(pct(withAlike, 0.95))}`)
  console.log(`p50 ratio: ${(pct(withSimilar, 0.5) / pct(without, 0.5)).toFixed(2)} (goal ≤ 2); p95 ratio: ${(pct(withSimilar, 0.95) / pct(without, 0.95)).toFixed(2)}`)
  console.log(`similar answered: ${(found.reduce((a, b) => a + b, 0) / found.length).toFixed(2)} per submission on average, ${found.filter((n) => n === 0).length} of ${found.length} with none`)
  if (firsts.length) console.log(`a stored text with one word changed: its original first in ${firsts.filter(Boolean).length} of ${firsts.length}`)
  console.log(`load average: ${loadAverage()} (${os.cpus().length} CPUs)`)
  // The two candidate queries alone, on the same rows, interleaved.
  const trgm: number[] = []
  const fts: number[] = []
  const orQuery = 'replace(plainto_tsquery(\'english\', $2)::text, \' & \', \' | \')::tsquery'
  const doc = 'to_tsvector(\'english\', contribution_type || \' \' || key_information || \' \' || reason || \' \' || suggested_action)'
  for (let i = 0; i < queries; i++) {
    const text = textOf(5000 + i)
    let s = performance.now()
    await app.repos.opportunities.similar(boot.project.id, { text, limit: 5, minScore: SIMILAR.minScore })
    trgm.push(performance.now() - s)
    s = performance.now()
    await loader.unsafe(`select id, ts_rank(${doc}, ${orQuery}) as score from opportunities where project_id = $1 and merged_into is null and ${doc} @@ ${orQuery} order by score desc, id limit 5`, [boot.project.id, text])
    fts.push(performance.now() - s)
  }

  console.log(`\nThe queries alone (${trgm.length} texts, ms):`)
  console.log(`${'bands + similarity ≥ ' + SIMILAR.minScore}`.padEnd(28) + ` ${f(pct(trgm, 0.5))} ${f(pct(trgm, 0.95))}`)
  console.log(`${'full text ts_rank, OR'.padEnd(28)} ${f(pct(fts, 0.5))} ${f(pct(fts, 0.95))}`)
  console.log(`\nload average: ${loadAverage()} (${os.cpus().length} CPUs)`)
} finally {
  await app.close()
  if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true })
  if (admin) {
    await admin.unsafe(`drop database if exists ${DB_NAME} with (force)`)
    await admin.end()
  }
}
