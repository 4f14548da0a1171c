// The raw events' month partitions (migration 0020; docs/design.md, "Events partitioned by day
// ranges"): created at start for last month to two months ahead, and again every hour by a
// timer, so that ingestion finds its month there (a batch for any other month creates it
// first). With EVENTS_RETENTION_DAYS the same timer drops every month that ends before
// today (UTC) − N − 1 days: the slack day covers every time zone's "today". Rollups are never
// touched, so daily metrics, retention and the overview stay exact for the dropped days.
// Tests drive it with `app.eventPartitions.run()`, on `app.now()`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { runPeriodically } from './periodic.ts'
import { addDays } from '../core/time.ts'

declare module 'fastify' {
  interface FastifyInstance {
    eventPartitions: { run(): Promise<{ created: number; dropped: string[] }> }
  }
}

export interface EventRetentionOptions {
  /** Run the hourly timer (the configuration from the environment does; tests call run()). */
  timer: boolean
  /** EVENTS_RETENTION_DAYS: raw events older than this many days (whole months) are dropped; null keeps everything. */
  retentionDays: number | null
  intervalMs?: number
}

const HOUR_MS = 3_600_000

async function eventRetentionPlugin(app: FastifyInstance, options: EventRetentionOptions) {
  const { partitions } = app.repos
  const concurrently = app.database.kind === 'postgres'

  async function run() {
    const today = app.now().toISOString().slice(0, 10)
    const created = await partitions.ensure(addDays(today, -31), addDays(today, 62))
    const dropped = options.retentionDays === null ? [] : await partitions.dropBefore(addDays(today, -(options.retentionDays + 1)), { concurrently })
    if (dropped.length) app.log.info({ dropped }, 'event retention: dropped raw event partitions')
    return { created, dropped }
  }
  app.decorate('eventPartitions', { run })

  // At start, before the first request: a failure (a read-only database) is logged and leaves
  // ingestion to create the months it needs.
  await run().catch((err: unknown) => app.log.error({ err }, 'event partitions at start'))
  if (!options.timer) return

  runPeriodically(app, { what: 'event partitions', intervalMs: options.intervalMs ?? HOUR_MS, work: run })
}

export default fp(eventRetentionPlugin, { name: 'event-retention', dependencies: ['repositories', 'registry'] })
