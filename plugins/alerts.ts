// The evaluation of alerts: after a change of a project's numbers (an ingested batch; a change
// of the review queue), asynchronously and coalesced per project, and when a day closes in the
// project's zone (a timer, like the webhook worker's: started with the app when the
// configuration turns the background workers on, stopped on close). Judging is core/alerts.ts;
// a change of state is one transaction of the repository (conditional UPDATE, event, message).
// Tests drive it with `app.alerts.evaluate()`, `evaluateDue()` and `settled()`, on `app.now()`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import { ANOMALY_WEEKS, isDailyMetric, judgeDaily, judgeNow, type Judgement } from '../core/alerts.ts'
import { addDays, localDate } from '../core/time.ts'
import { DAILY_USE, SIGNUP } from '../schemas/metrics.ts'
import type { AlertMessage, AlertRow } from '../db/repositories/alerts.ts'

declare module 'fastify' {
  interface FastifyInstance {
    alerts: AlertEvaluator
  }
}

/** Which of a project's alerts an evaluation judges: those on daily metrics, on the review queue, or all. */
export type AlertScope = 'daily' | 'queue' | 'all'

export interface AlertEvaluator {
  /** Judges the project's enabled alerts of `scope` now; resolves with the changes of state it made. */
  evaluate(projectId: string, scope?: AlertScope): Promise<AlertMessage[]>
  /** An evaluation soon, after the caller's answer; a burst of calls for one project runs once or twice. */
  schedule(projectId: string, scope: AlertScope): void
  /** Evaluates every project with alerts due (a day closed in its zone, or an oldest-pending age to refresh); resolves with how many projects. */
  evaluateDue(): Promise<number>
  /** Resolves once no scheduled evaluation waits or runs (tests, and close). */
  settled(): Promise<void>
}

export interface AlertsPluginOptions {
  /** Run the day-close timer (the background workers' switch, WEBHOOKS_ENABLED); off: only changes and callers evaluate. */
  enabled: boolean
  intervalMs?: number
}

/** The operations that change the numbers alerts watch, and which alerts they concern. */
const CHANGES: Record<string, AlertScope> = {
  ingest_events: 'daily',
  submit_opportunity: 'queue',
  review_opportunity: 'queue',
  review_opportunities: 'queue',
  review_opportunity_from_view: 'queue',
  merge_opportunities: 'queue',
  unmerge_opportunity: 'queue',
  // A new time zone re-derives every day.
  update_project: 'all',
}

/** A scheduled evaluation waits this long for the rest of a burst (and for the answer to go out). */
const GATHER_MS = 20
/** The oldest pending opportunity's age grows with the clock alone: its alerts are judged at least this often. */
const AGE_EVERY_MS = 5 * 60_000
const HOUR_MS = 3_600_000

const round = (n: number) => Math.round(n * 100) / 100

async function alertsPlugin(app: FastifyInstance, options: AlertsPluginOptions) {
  const { repos } = app

  /** The event a daily metric counts. */
  const eventOf = (alert: AlertRow) => (alert.metric === 'registrations' ? SIGNUP : alert.metric === 'daily_users' ? DAILY_USE : alert.event!)

  /** The value of a daily metric on a day, from the rollups read for the project. */
  function dailyValues(alert: AlertRow, counts: Map<string, { events: number; uniqueUsers: number }>) {
    const event = eventOf(alert)
    const field = alert.metric === 'event_count' ? 'events' : 'uniqueUsers'
    return (day: string) => counts.get(`${event}\u0000${day}`)?.[field] ?? 0
  }

  async function evaluate(projectId: string, scope: AlertScope = 'all'): Promise<AlertMessage[]> {
    const alerts = (await repos.alerts.list(projectId, true)).filter((a) => scope === 'all' || (scope === 'daily') === isDailyMetric(a.metric))
    if (alerts.length === 0) return []
    const project = await repos.projects.find(projectId)
    if (!project) return []
    const now = app.now()
    const today = localDate(now, project.timezone)
    const daily = alerts.filter((a) => isDailyMetric(a.metric))
    const queueAlerts = alerts.filter((a) => !isDailyMetric(a.metric))

    // One read of the rollups for every daily alert: the days an anomaly looks back on, to today.
    const counts = new Map<string, { events: number; uniqueUsers: number }>()
    let firstDays = new Map<string, string>()
    if (daily.length > 0) {
      const names = [...new Set(daily.map(eventOf))]
      // below and anomaly look back, never before the event's first day.
      const lookingBack = [...new Set(daily.filter((a) => a.condition !== 'above').map(eventOf))]
      const [rows, first] = await Promise.all([
        repos.events.dailyCounts(projectId, addDays(today, -(7 * ANOMALY_WEEKS + 1)), today, names),
        lookingBack.length > 0 ? repos.alerts.firstDays(projectId, lookingBack) : Promise.resolve(firstDays),
      ])
      for (const r of rows) counts.set(`${r.event}\u0000${r.day}`, { events: r.events, uniqueUsers: r.uniqueUsers })
      firstDays = first
    }
    const queue = queueAlerts.length > 0 ? await repos.alerts.queue(projectId) : null

    const judged: [AlertRow, Judgement][] = alerts.map((a) => {
      if (isDailyMetric(a.metric)) return [a, judgeDaily(a, { today, firstDay: firstDays.get(eventOf(a)) ?? null, valueOf: dailyValues(a, counts) })]
      const value = a.metric === 'pending_opportunities'
        ? queue!.pending
        : queue!.oldest ? round(Math.max(0, now.getTime() - queue!.oldest.getTime()) / HOUR_MS) : 0
      return [a, judgeNow(a, today, value)]
    })

    const changes: AlertMessage[] = []
    const unchanged: string[] = []
    const values = new Map<string, number>()
    const card = { id: project.id, slug: project.slug, name: project.name }
    for (const [alert, j] of judged) {
      values.set(alert.id, j.value)
      if (j.firing === (alert.state === 'firing')) {
        unchanged.push(alert.id)
        continue
      }
      // Conditional on the state it was judged in: another instance may have changed it already.
      const message = await repos.alerts.transition({ alertId: alert.id, from: alert.state, day: j.day, value: j.value, detail: j.detail, project: card, at: now })
      if (message) changes.push(message)
    }
    await repos.alerts.evaluated(unchanged, values, now)
    if (changes.length > 0) app.log.info({ project: projectId, changes: changes.map((c) => `${c.alert.id} ${c.kind}`) }, 'alerts changed state')
    return changes
  }

  // Coalescing: per project, at most one evaluation runs and one waits; a request while one
  // waits joins it, a request while one runs makes one more after it.
  const waiting = new Map<string, Set<AlertScope>>()
  const running = new Map<string, Promise<void>>()
  let closing = false

  function schedule(projectId: string, scope: AlertScope): void {
    if (closing) return
    const scopes = waiting.get(projectId)
    if (scopes) {
      scopes.add(scope)
      return
    }
    waiting.set(projectId, new Set([scope]))
    if (running.has(projectId)) return
    const run = (async () => {
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS))
      try {
        for (let scopes = waiting.get(projectId); scopes; scopes = waiting.get(projectId)) {
          waiting.delete(projectId)
          const scope: AlertScope = scopes.size === 1 ? [...scopes][0]! : 'all'
          await evaluate(projectId, scope).catch((err) => app.log.error({ err, project: projectId }, 'alert evaluation failed'))
        }
      } finally {
        // In the same tick as the last look at `waiting`: a request after it starts a new run.
        running.delete(projectId)
      }
    })()
    running.set(projectId, run)
  }

  async function settled(): Promise<void> {
    while (running.size > 0) await Promise.all(running.values())
  }

  async function evaluateDue(): Promise<number> {
    const projects = await repos.alerts.due(app.now(), AGE_EVERY_MS)
    for (const projectId of projects) {
      if (closing) break
      await evaluate(projectId).catch((err) => app.log.error({ err, project: projectId }, 'alert evaluation failed'))
    }
    return projects.length
  }

  app.decorate('alerts', { evaluate, schedule, evaluateDue, settled })

  // After the tool plugins have added every operation (the registry is complete at ready).
  app.registry.onProjectChange(({ operation, projectId }) => {
    const scope = CHANGES[operation]
    if (scope) schedule(projectId, scope)
  })

  let timer: NodeJS.Timeout | undefined
  let sweep: Promise<unknown> | undefined
  if (options.enabled) {
    const tick = () => {
      sweep = evaluateDue()
        .catch((err) => app.log.error({ err }, 'alert day-close evaluation'))
        .finally(() => {
          sweep = undefined
          if (!closing) timer = setTimeout(tick, options.intervalMs ?? 60_000).unref()
        })
    }
    app.addHook('onReady', async () => {
      timer = setTimeout(tick, 0).unref()
    })
  }
  // Before the database closes (hooks run in reverse order of registration).
  app.addHook('onClose', async () => {
    closing = true
    clearTimeout(timer)
    waiting.clear()
    await sweep
    await settled()
  })
}

export default fp(alertsPlugin, { name: 'alerts', dependencies: ['repositories', 'registry'] })
