// A project's alerts and their log of firings and recoveries. A change of state is one
// transaction: a conditional UPDATE of the alert's state (only from the state it was judged in,
// so that two instances judging at once change it once), its alert_events row, and the webhook
// message, queued through the outbox in the same transaction.
import { and, asc, desc, eq, sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import { alertEvents, alerts, opportunities, opportunityCounts } from '../schema.ts'
import { newId } from '../ids.ts'
import { enqueueWebhooks } from './webhooks.ts'

export type AlertRow = typeof alerts.$inferSelect
export type AlertEventRow = typeof alertEvents.$inferSelect

type Metric = AlertRow['metric']
type Condition = AlertRow['condition']

/** The sent fields of an update (undefined: unchanged). */
export interface AlertChange {
  name?: string
  metric?: Metric
  event?: string
  condition?: Condition
  threshold?: number
  enabled?: boolean
}

const EVENT_METRICS = sql.raw("('event_count', 'event_users')")
const QUEUE_METRICS = sql.raw("('pending_opportunities', 'oldest_pending_age_hours')")

/** What a change of state tells receivers: the alert.triggered / alert.resolved message's data. */
export interface AlertMessage {
  alert: { id: string; name: string; metric: Metric; event: string | null; condition: Condition; threshold: number | null }
  id: string
  kind: 'triggered' | 'resolved'
  day: string
  value: number
  detail: Record<string, unknown>
  project: { id: string; slug: string; name: string }
  at: string
}

export function createAlertsRepository(db: Queryable) {
  return {
    /**
     * A new alert, unless the project has `max` already: counted and inserted under a lock of the
     * project's alerts (a transaction-scoped advisory lock), so two creations at once cannot both
     * take the last place. Undefined when the project is full.
     */
    async create(input: { projectId: string; name: string; metric: Metric; event: string | null; condition: Condition; threshold: number | null; createdBy: string; now: Date }, max: number): Promise<AlertRow | undefined> {
      return db.transaction(async (tx) => {
        await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`alerts:${input.projectId}`}))`)
        const [count] = await tx.select({ n: sql<number>`count(*)::int` }).from(alerts).where(eq(alerts.projectId, input.projectId))
        if (count!.n >= max) return undefined
        const [row] = await tx.insert(alerts).values({
          id: newId('alr'),
          projectId: input.projectId,
          name: input.name,
          metric: input.metric,
          event: input.event,
          condition: input.condition,
          threshold: input.threshold,
          createdBy: input.createdBy,
          createdAt: input.now,
          updatedAt: input.now,
        }).returning()
        return row!
      })
    },

    /** The project's alerts, oldest first (`enabledOnly`: those that are evaluated). */
    async list(projectId: string, enabledOnly = false): Promise<AlertRow[]> {
      return db.select().from(alerts)
        .where(and(eq(alerts.projectId, projectId), enabledOnly ? eq(alerts.enabled, true) : undefined))
        .orderBy(asc(alerts.createdAt), asc(alerts.id))
    },

    async find(projectId: string, id: string): Promise<AlertRow | undefined> {
      const [row] = await db.select().from(alerts).where(and(eq(alerts.id, id), eq(alerts.projectId, projectId)))
      return row
    },

    /**
     * Changes the sent fields in ONE conditional UPDATE: the row it leaves must still be a valid
     * definition (the event with the event metrics only, a threshold with above/below only, no
     * anomaly on the review queue), checked in its WHERE against the stored fields it keeps. A
     * metric without an event clears the event; an anomaly clears the threshold. Undefined when
     * nothing matched: the alert is missing or the result would be invalid (the caller reads
     * which, to say so; nothing changed).
     */
    async update(projectId: string, id: string, change: AlertChange, now: Date): Promise<AlertRow | undefined> {
      const metric = sql`coalesce(${change.metric ?? null}::text, ${alerts.metric})`
      const condition = sql`coalesce(${change.condition ?? null}::text, ${alerts.condition})`
      const event = sql`coalesce(${change.event ?? null}::text, ${alerts.event})`
      const threshold = sql`coalesce(${change.threshold ?? null}::double precision, ${alerts.threshold})`
      const [row] = await db.update(alerts).set({
        ...(change.name !== undefined ? { name: change.name } : {}),
        ...(change.enabled !== undefined ? { enabled: change.enabled } : {}),
        metric: sql`${metric}`,
        condition: sql`${condition}`,
        event: sql`case when ${metric} in ${EVENT_METRICS} then ${event} else null end`,
        threshold: sql`case when ${condition} = 'anomaly' then null else ${threshold} end`,
        updatedAt: now,
      }).where(and(
        eq(alerts.id, id),
        eq(alerts.projectId, projectId),
        sql`(${metric} not in ${EVENT_METRICS} or ${event} is not null)`,
        sql`(${change.event ?? null}::text is null or ${metric} in ${EVENT_METRICS})`,
        sql`(${condition} = 'anomaly' or ${threshold} is not null)`,
        sql`(${change.threshold ?? null}::double precision is null or ${condition} <> 'anomaly')`,
        sql`not (${condition} = 'anomaly' and ${metric} in ${QUEUE_METRICS})`
      )).returning()
      return row
    },

    async remove(projectId: string, id: string): Promise<boolean> {
      return (await db.delete(alerts).where(and(eq(alerts.id, id), eq(alerts.projectId, projectId))).returning({ id: alerts.id })).length > 0
    },

    /** Firings and recoveries, newest first; one alert's (`alertId`) or the project's. */
    async events(projectId: string, f: { alertId?: string; limit: number; offset: number }) {
      const where = and(eq(alertEvents.projectId, projectId), f.alertId ? eq(alertEvents.alertId, f.alertId) : undefined)
      const [rows, [count]] = await Promise.all([
        db.select().from(alertEvents).where(where).orderBy(desc(alertEvents.at), desc(alertEvents.id)).limit(f.limit).offset(f.offset),
        db.select({ n: sql<number>`count(*)::int` }).from(alertEvents).where(where),
      ])
      return { items: rows, total: count!.n }
    },

    /**
     * The change of state `from` → the other, in one transaction: the UPDATE takes effect only if
     * the alert is still enabled and still in `from` (another instance may have changed it a
     * moment ago: then nothing is written and the answer is null), then the event row and the
     * webhook message of its type. The message carries the alert as it is now.
     */
    async transition(input: { alertId: string; from: 'ok' | 'firing'; day: string; value: number; detail: Record<string, unknown>; project: { id: string; slug: string; name: string }; at: Date }): Promise<AlertMessage | null> {
      const to = input.from === 'ok' ? 'firing' : 'ok'
      const kind = to === 'firing' ? 'triggered' : 'resolved'
      return db.transaction(async (tx) => {
        const [alert] = await tx.update(alerts)
          .set({ state: to, lastValue: input.value, lastEvaluatedAt: input.at })
          .where(and(eq(alerts.id, input.alertId), eq(alerts.projectId, input.project.id), eq(alerts.state, input.from), eq(alerts.enabled, true)))
          .returning()
        if (!alert) return null
        const id = newId('ale')
        await tx.insert(alertEvents).values({ id, alertId: alert.id, projectId: alert.projectId, kind, day: input.day, value: input.value, detail: input.detail, at: input.at })
        const message: AlertMessage = {
          alert: { id: alert.id, name: alert.name, metric: alert.metric, event: alert.event, condition: alert.condition, threshold: alert.threshold },
          id,
          kind,
          day: input.day,
          value: input.value,
          detail: input.detail,
          project: input.project,
          at: input.at.toISOString(),
        }
        await enqueueWebhooks(tx, alert.projectId, kind === 'triggered' ? 'alert.triggered' : 'alert.resolved', input.at, [message])
        return message
      })
    },

    /** An evaluation that changed no state: its value and time, for the listing. */
    async evaluated(ids: string[], values: Map<string, number>, at: Date): Promise<void> {
      if (ids.length === 0) return
      const pairs = JSON.stringify(ids.map((id) => [id, values.get(id) ?? null]))
      await db.execute(sql`
        update alerts a set last_value = (p.value->>1)::double precision, last_evaluated_at = ${at.toISOString()}::timestamptz
        from json_array_elements(${pairs}::json) as p(value)
        where a.id = p.value->>0`)
    },

    /** The review queue now: pending opportunities (not merged away), and when the oldest arrived. */
    async queue(projectId: string): Promise<{ pending: number; oldest: Date | null }> {
      const [counted, [oldest]] = await Promise.all([
        db.select({ n: sql<number>`coalesce(sum(${opportunityCounts.n}), 0)`.mapWith(Number) }).from(opportunityCounts)
          .where(and(eq(opportunityCounts.projectId, projectId), eq(opportunityCounts.status, 'pending'))),
        db.select({ at: sql<string | null>`min(${opportunities.receivedAt})` }).from(opportunities)
          .where(and(eq(opportunities.projectId, projectId), eq(opportunities.status, 'pending'), sql`${opportunities.mergedInto} is null`)),
      ])
      return { pending: counted[0]?.n ?? 0, oldest: oldest?.at ? new Date(oldest.at) : null }
    },

    /**
     * Each event's first day in the project (the start of an anomaly's history: a week before an
     * event was first recorded is no week of zeros), from the daily counters (a few rows a day
     * per project: its days × events × shards).
     */
    async firstDays(projectId: string, names: string[]): Promise<Map<string, string>> {
      const result = await db.execute(sql`
        select e.event, (select min(c.day)::text from daily_event_counts c where c.project_id = ${projectId} and c.event = e.event) as day
        from json_array_elements_text(${JSON.stringify(names)}::json) as e(event)`)
      return new Map(rowsOf<{ event: string; day: string | null }>(result).filter((r) => r.day !== null).map((r) => [r.event, r.day!]))
    },

    /**
     * The projects with alerts due an evaluation the numbers did not cause: those not evaluated
     * since their project's day began (in its zone: the day closed), and the oldest-pending-age
     * alerts not evaluated for `ageEveryMs` (that age grows with the clock alone).
     */
    async due(now: Date, ageEveryMs: number): Promise<string[]> {
      const at = now.toISOString()
      const result = await db.execute(sql`
        select distinct a.project_id from alerts a join projects p on p.id = a.project_id
        where a.enabled and (
          coalesce(a.last_evaluated_at, a.created_at) < (date_trunc('day', ${at}::timestamptz at time zone p.timezone) at time zone p.timezone)
          or (a.metric = 'oldest_pending_age_hours' and coalesce(a.last_evaluated_at, a.created_at) < ${at}::timestamptz - ${`${ageEveryMs} milliseconds`}::interval))`)
      return rowsOf<{ project_id: string }>(result).map((r) => r.project_id)
    },
  }
}
