// npm run bench:webhooks [-- --rounds 3] [--duration 5] [--connections 50] …
//
// The cost of outgoing webhooks to the write path (issue 16), on the local PostgreSQL:
//  1. a fresh database (dropped first), migrated and bootstrapped by the app in this process;
//     two projects with the same number of opportunities: "none" without subscriptions, and
//     "3 hooks" with three subscriptions to opportunity.reviewed, each pointing at a receiver
//     in this process (http://127.0.0.1:…, answering 204 at once);
//  2. the server started as `npm start` starts it (its own process, the same Node flags), with
//     WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true, so its delivery worker runs during the load;
//  3. POST /v1/tools/review_opportunity under autocannon (a child process of its own), a random
//     opportunity of the project and the next status in turn per request, alternating the two
//     projects in rounds; after each round of "3 hooks" the bench waits (bounded by --drain)
//     until every queued message has arrived, so that the next "none" round runs clean.
// It prints each round's requests/s, the ratio "3 hooks" / "none" (the median of the rounds'
// ratios; target ≥ 80 %), the delivery lag from the change to its arrival at a receiver (now −
// the payload's `timestamp`, which the review sets just before its transaction; p50 and p99)
// and the messages received (distinct webhook-id) against those queued (every review of the
// project, counted in its history, × 3; the first delivery of each receiver is verified with
// the `standardwebhooks` package), with each round's backlog and the time to drain it, and
// the load average. The database is dropped afterwards unless --keep; the exit code is 1 when a
// target is missed.
import { spawn } from 'node:child_process'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { setTimeout as sleep } from 'node:timers/promises'
import postgres from 'postgres'
import { Webhook } from 'standardwebhooks'
import { buildApp } from '../app.ts'
import { loadConfig } from '../config.ts'
import { bootstrap } from '../bin/admin.ts'
import { Client, freePort, loadAverage, median, numericOption } from './client-process.ts'
import type { CannonResult } from './client.ts'
import { checkDatabaseName, databaseUrl, dropDatabases, quiet, recreateDatabase, registerCleanup, reportFailure, serverVersion } from './database.ts'
import { npmStart } from './server-process.ts'

const USAGE = `Usage: npm run bench:webhooks -- [options]

  --rounds <n>          rounds, each "none" then "3 hooks" (default 3)
  --duration <s>        seconds of load per project per round (default 5)
  --warmup <s>          seconds of unmeasured load on each project first (default 2)
  --connections <n>     concurrent connections (default 50)
  --opportunities <n>   opportunities per project (default 3000)
  --drain <s>           at most this long to wait for the queued messages after a round (default 120)
  --keep                keep the database afterwards
  --db-name <name>      database name (default growthdesk_bench_webhooks); server from
                        BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres)
`
const STATUSES = ['reviewing', 'contacted', 'adopted', 'ignored', 'done', 'pending'] as const

await main()

/** The value at quantile q of sorted figures (nearest rank). */
function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

interface Receiver {
  url: string
  server: http.Server
  secret?: string
  verified: boolean
}

async function main() {
  const { values: args } = parseArgs({
    args: process.argv.slice(2),
    options: {
      rounds: { type: 'string', default: '3' },
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      opportunities: { type: 'string', default: '3000' },
      drain: { type: 'string', default: '120' },
      keep: { type: 'boolean', default: false },
      'db-name': { type: 'string', default: 'growthdesk_bench_webhooks' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (args.help) {
    process.stdout.write(USAGE)
    process.exit(0)
  }
  const num = numericOption(USAGE, { integer: true })
  const rounds = num('rounds', args.rounds, 1, 100)
  const duration = num('duration', args.duration, 1, 600)
  const warmup = num('warmup', args.warmup, 0, 600)
  const connections = num('connections', args.connections, 1, 1000)
  const opportunityCount = num('opportunities', args.opportunities, 10, 1_000_000)
  const drainLimit = num('drain', args.drain, 1, 3600)
  const dbName = checkDatabaseName(args['db-name']!)

  const log = (line = '') => process.stdout.write(`${line}\n`)
  const benchUrl = databaseUrl(dbName)

  // The receivers: every delivery's lag and webhook-id; the first one of each is verified.
  const lags: number[] = []
  const seen = new Set<string>()
  let duplicates = 0
  let badSignatures = 0
  const receivers: Receiver[] = []
  for (let i = 0; i < 3; i++) {
    const rx: Receiver = { url: '', server: http.createServer(), verified: false }
    rx.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const at = Date.now()
        const body = Buffer.concat(chunks).toString('utf8')
        res.writeHead(204).end()
        const id = String(req.headers['webhook-id'])
        if (seen.has(id)) duplicates++
        else seen.add(id)
        try {
          const payload = JSON.parse(body) as { timestamp: string }
          lags.push(at - Date.parse(payload.timestamp))
          if (!rx.verified && rx.secret) {
            rx.verified = true
            new Webhook(rx.secret).verify(body, req.headers as Record<string, string>)
          }
        } catch {
          badSignatures++
        }
      })
    })
    const port = await freePort()
    await new Promise<void>((resolve) => rx.server.listen(port, '127.0.0.1', resolve))
    rx.url = `http://127.0.0.1:${port}/hook/${i + 1}`
    receivers.push(rx)
  }

  const client = new Client()

  let server: ReturnType<typeof spawn> | undefined
  let sql: postgres.Sql | undefined
  const cleanup = registerCleanup(async () => {
    client.close()
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve))
      server.kill('SIGTERM')
      await exited
    }
    await sql?.end().catch(() => {})
    for (const rx of receivers) {
      rx.server.closeAllConnections()
      rx.server.close()
    }
    if (!args.keep) await dropDatabases([dbName])
  })

  let failed = false
  try {
    const version = await serverVersion()
    await recreateDatabase(dbName)
    log(`growthdesk bench:webhooks — PostgreSQL ${version}, ${os.cpus().length} CPUs, Node ${process.version}, ${new Date().toISOString()}, load average ${loadAverage()}`)
    log(`database: ${benchUrl}; ${rounds} rounds × ${duration} s per project, ${connections} connections, ${opportunityCount} opportunities per project`)

    // Setup in this process, with the worker off: the projects, the subscriptions, the data.
    const app = await buildApp({
      config: {
        ...loadConfig({ HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'silent' }),
        database: { kind: 'postgres', url: benchUrl },
        webhooks: { enabled: false, allowPrivateNetworks: true },
      },
      logger: false,
    })
    let key: string
    let userId: string
    const projects = { none: { slug: '', id: '' }, hooks: { slug: 'with-webhooks', id: '' } }
    try {
      const boot = await bootstrap(app, { workspace: 'growthdesk bench webhooks', email: 'bench-webhooks@growthdesk.bench', project: 'No webhooks' })
      key = boot.keys.service
      userId = boot.user.id
      projects.none = { slug: boot.project.slug, id: boot.project.id }
      const auth = { authorization: `Bearer ${key}` }
      const created = await app.inject({ method: 'POST', url: '/v1/tools/create_project', headers: auth, payload: { slug: projects.hooks.slug, name: 'With webhooks' } })
      if (created.statusCode !== 200) throw new Error(`create_project: ${created.statusCode} ${created.body}`)
      projects.hooks.id = (created.json() as { result: { id: string } }).result.id
      for (const rx of receivers) {
        const res = await app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth, payload: { project: projects.hooks.slug, url: rx.url, events: ['opportunity.reviewed'], description: 'bench receiver' } })
        if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${res.body}`)
        rx.secret = (res.json() as { secret: string }).secret
      }
    } finally {
      await app.close()
    }
    sql = postgres(benchUrl, { max: 2, ...quiet })
    const ids: Record<'none' | 'hooks', string[]> = { none: [], hooks: [] }
    for (const which of ['none', 'hooks'] as const) {
      const rows = await sql<{ id: string }[]>`
        insert into opportunities (id, project_id, contribution_type, key_information, reason, suggested_action, submitted_by, received_at)
        select 'opp_' || ${which === 'none' ? 'n' : 'h'} || lpad(g.i::text, 8, '0'), ${projects[which].id}, 'potential_user_opportunity',
               'A founder on Reddit asks for a simpler way to track daily active users (thread ' || g.i || ').',
               'Matches our audience and stated goals.', 'Reply with a short walkthrough and a link to the docs.',
               ${userId}, now() - g.i * interval '1 minute'
        from generate_series(1, ${opportunityCount}::int) g(i)
        returning id`
      ids[which] = rows.map((r) => r.id)
    }
    await sql.unsafe('vacuum analyze')

    // The server as `npm start` runs it, in its own process, its delivery worker on.
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const root = path.join(import.meta.dirname, '..')
    server = spawn(process.execPath, [...npmStart().flags, npmStart().script], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: benchUrl,
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: origin,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_MAX: '1000000',
        RATE_LIMIT_CONCURRENCY: '0',
        WEBHOOKS_ENABLED: 'true',
        WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    for (let i = 0; ; i++) {
      const up = await fetch(`${origin}/health`).then((r) => r.ok, () => false)
      if (up) break
      if (i > 600 || server.exitCode !== null) throw new Error('the server did not start')
      await sleep(100)
    }

    const queued = async () => {
      const [row] = await sql!<{ all: number; pending: number; failed: number }[]>`
        select count(*)::int as all, (count(*) filter (where status = 'pending'))::int as pending,
               (count(*) filter (where status = 'failed'))::int as failed
        from webhook_deliveries`
      return row!
    }
    /** Waits until every queued message has arrived (or the bound); seconds waited, and whether drained. */
    const drain = async (): Promise<{ seconds: number; drained: boolean; backlog: number }> => {
      const started = Date.now()
      const backlog = (await queued()).all - seen.size
      for (;;) {
        const q = await queued()
        if (seen.size >= q.all && q.pending === 0) return { seconds: (Date.now() - started) / 1000, drained: true, backlog }
        if (Date.now() - started > drainLimit * 1000) return { seconds: (Date.now() - started) / 1000, drained: false, backlog }
        await sleep(50)
      }
    }
    // A random opportunity of the project and the next status in turn, per request.
    const run = (which: 'none' | 'hooks', seconds: number) =>
      client.run<CannonResult>({
        kind: 'autocannon',
        url: `${origin}/v1/tools/review_opportunity`,
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        bodies: { fixed: { project: projects[which].slug }, random: { event_id: ids[which] }, cycle: { status: STATUSES } },
        connections,
        seconds,
      })

    // One review of each project first, so that a refusal shows its reason instead of a count.
    let reviewsWithHooks = 1
    for (const which of ['none', 'hooks'] as const) {
      const res = await fetch(`${origin}/v1/tools/review_opportunity`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ project: projects[which].slug, event_id: ids[which][0], status: 'reviewing' }),
      })
      if (res.status !== 200) throw new Error(`review_opportunity (${which}): ${res.status} ${await res.text()}`)
    }
    if (warmup > 0) {
      for (const which of ['none', 'hooks'] as const) {
        const r = await run(which, warmup)
        if (which === 'hooks') reviewsWithHooks += r.ok
      }
      const d = await drain()
      log(`warm-up: ${warmup} s per project, then ${d.seconds.toFixed(1)} s to drain (not measured)`)
    }
    lags.length = 0

    log()
    log('  round  project        req/s   p50 ms   p99 ms   non-2xx  errors   backlog at end   drained in   load avg')
    const ratios: number[] = []
    const rate: Record<'none' | 'hooks', number[]> = { none: [], hooks: [] }
    let undrained = false
    for (let round = 1; round <= rounds; round++) {
      const perRound: Partial<Record<'none' | 'hooks', number>> = {}
      for (const which of ['none', 'hooks'] as const) {
        const r = await run(which, duration)
        if (r.non2xx > 0 || r.errors > 0) failed = true
        let tail = '               -            -'
        if (which === 'hooks') {
          reviewsWithHooks += r.ok
          const d = await drain()
          if (!d.drained) undrained = true
          tail = `${String(d.backlog).padStart(16)} ${(d.drained ? `${d.seconds.toFixed(1)} s` : `> ${drainLimit} s`).padStart(12)}`
        }
        perRound[which] = r.requestsPerSecond
        rate[which].push(r.requestsPerSecond)
        log(`  ${String(round).padStart(5)}  ${(which === 'none' ? 'none' : '3 hooks').padEnd(9)} ${r.requestsPerSecond.toFixed(0).padStart(9)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)} ${String(r.non2xx).padStart(9)} ${String(r.errors).padStart(7)} ${tail}   ${os.loadavg()[0]!.toFixed(2)}`)
      }
      ratios.push(perRound.hooks! / perRound.none!)
    }

    const q = await queued()
    // Every committed review of the project (its history entries; autocannon does not count the
    // requests still in flight when its time is up, which the server completes all the same).
    const [{ reviews }] = (await sql<{ reviews: number }[]>`
      select count(*)::int as reviews from review_history h join opportunities o on o.id = h.opportunity_id
      where o.project_id = ${projects.hooks.id}`) as unknown as [{ reviews: number }]
    const expected = reviews * receivers.length
    const sorted = [...lags].sort((a, b) => a - b)
    const ratio = median(ratios)
    const ratioOk = ratio >= 0.8
    const deliveredOk = !undrained && expected > 0 && seen.size === expected && q.all === expected && q.failed === 0 && badSignatures === 0
    if (!ratioOk || !deliveredOk) failed = true
    log()
    log(`Review throughput: none ${median(rate.none).toFixed(0)} req/s, 3 hooks ${median(rate.hooks).toFixed(0)} req/s (medians); 3 hooks / none = ${(ratio * 100).toFixed(1)} % ` +
      `(median of the rounds: ${ratios.map((r) => `${(r * 100).toFixed(1)} %`).join(', ')}) — target ≥ 80 %: ${ratioOk ? 'PASS' : 'FAIL'}`)
    log(`Delivery lag, the change to its arrival, over ${sorted.length} measured deliveries: p50 ${quantile(sorted, 0.5)} ms, p99 ${quantile(sorted, 0.99)} ms, max ${sorted.at(-1) ?? NaN} ms`)
    log(`Delivered: ${seen.size} distinct messages of ${expected} expected (${reviews} reviews × ${receivers.length}; ${reviewsWithHooks} answered 2xx in autocannon's time); ${q.all} queued, ${q.pending} pending, ${q.failed} failed; ` +
      `${duplicates} duplicates; ${receivers.filter((r) => r.verified).length} of ${receivers.length} first deliveries verified${badSignatures ? `, ${badSignatures} BAD` : ''} — ${deliveredOk ? 'PASS' : 'FAIL'}`)
    log(`Load average: ${loadAverage()}`)
  } catch (err) {
    failed = true
    reportFailure('bench:webhooks', err)
  } finally {
    await cleanup()
  }
  process.exit(failed ? 1 : 0)
}
