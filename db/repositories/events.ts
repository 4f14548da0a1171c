import { and, desc, eq, gte, lte, inArray, sql } from 'drizzle-orm'
import { rowsOf, type Db } from '../client.ts'
import { dailyEventCounts, events, projectEventStats, userActivity } from '../schema.ts'

export interface IncomingEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
  /**
   * The client sent a uuid but no timestamp: the event is stamped with the time of receipt, so a
   * resend after the project's midnight lands on the next day. Such events are also looked for on
   * the day before.
   */
  unstamped?: boolean
}

/** The event names that feed daily-ops (DESIGN §5). */
export const SIGNUP = 'signup'
export const DAILY_USE = 'daily_use'

/** The UTC date of a timestamp, spelled as in the unique index events_uuid_key (so it is used). */
const UTC_DAY = (column: string) => sql.raw(`((${column} at time zone 'UTC')::date)`)

export function createEventsRepository(db: Db) {
  return {
    /**
     * Stores a batch and updates every rollup in ONE statement, so a batch is all or nothing.
     * An event is identified by its uuid and the UTC date of its timestamp (the unique index): a
     * resend carries the same timestamp; one stamped on receipt is also looked for on the day
     * before, in case the resend came after midnight. Exact unique counts: a
     * (project, event, day, user) pair increments `unique_users` only the first time it is inserted
     * into daily_event_users. Rows are written in key order so concurrent batches lock in the same
     * order and cannot deadlock.
     */
    async ingest(projectId: string, batch: IncomingEvent[], now: Date): Promise<{ accepted: number; duplicates: number }> {
      const payload = JSON.stringify(batch)
      const result = await db.execute<{ accepted: number }>(sql`
        with project as (
          -- The share lock waits out a time-zone change (which rebuilds the rollups) and reads the zone it left.
          select timezone from projects where id = ${projectId} for share
        ),
        input as (
          select x.*, (x.timestamp at time zone project.timezone)::date as day
          from project, jsonb_to_recordset(${payload}::jsonb)
            as x(uuid uuid, event text, distinct_id text, timestamp timestamptz, properties jsonb, unstamped boolean)
        ),
        ins as (
          insert into events (project_id, uuid, event, distinct_id, occurred_at, day, properties, received_at)
          select ${projectId}, uuid, event, distinct_id, timestamp, day, coalesce(properties, '{}'::jsonb), ${now.toISOString()}::timestamptz
          from input
          where not (coalesce(unstamped, false) and exists (
            select 1 from events e where e.project_id = ${projectId} and e.uuid = input.uuid
              and ${UTC_DAY('e.occurred_at')} = ${UTC_DAY('input.timestamp')} - 1))
          order by ${UTC_DAY('timestamp')}, uuid
          on conflict (project_id, ${UTC_DAY('occurred_at')}, uuid) do nothing
          returning event, distinct_id, day, occurred_at
        ),
        firsts as (
          insert into daily_event_users (project_id, event, day, distinct_id)
          select ${projectId}, event, day, distinct_id from (select distinct event, day, distinct_id from ins) d
          order by event, day, distinct_id
          on conflict do nothing
          returning event, day
        ),
        active as (
          insert into user_activity (project_id, distinct_id, last_active_day)
          select ${projectId}, distinct_id, max(day) from ins where event = ${DAILY_USE}
          group by distinct_id order by distinct_id
          on conflict (project_id, distinct_id)
            do update set last_active_day = excluded.last_active_day
            where user_activity.last_active_day < excluded.last_active_day
          returning 1
        ),
        counted as (
          insert into daily_event_counts (project_id, day, event, events, unique_users)
          select ${projectId}, c.day, c.event, c.n, coalesce(f.n, 0)
          from (select day, event, count(*) as n from ins group by day, event) c
          left join (select day, event, count(*) as n from firsts group by day, event) f using (day, event)
          order by c.day, c.event
          on conflict (project_id, day, event) do update set
            events = daily_event_counts.events + excluded.events,
            unique_users = daily_event_counts.unique_users + excluded.unique_users
          returning 1
        ),
        stats as (
          insert into project_event_stats (project_id, last_event_at, events)
          select ${projectId}, max(occurred_at), count(*) from ins having count(*) > 0
          on conflict (project_id) do update set
            last_event_at = greatest(project_event_stats.last_event_at, excluded.last_event_at),
            events = project_event_stats.events + excluded.events
          returning 1
        )
        select (select count(*) from ins)::int as accepted,
               (select count(*) from active)::int + (select count(*) from counted)::int + (select count(*) from stats)::int as touched
      `)
      const accepted = Number(rowsOf<{ accepted: number }>(result)[0]!.accepted)
      return { accepted, duplicates: batch.length - accepted }
    },

    /** Per-day, per-event counters for [from, to] (inclusive), optionally some events only. */
    async dailyCounts(projectId: string, from: string, to: string, names?: string[]) {
      return db
        .select({ day: dailyEventCounts.day, event: dailyEventCounts.event, events: dailyEventCounts.events, uniqueUsers: dailyEventCounts.uniqueUsers })
        .from(dailyEventCounts)
        .where(
          and(
            eq(dailyEventCounts.projectId, projectId),
            gte(dailyEventCounts.day, from),
            lte(dailyEventCounts.day, to),
            names ? inArray(dailyEventCounts.event, names) : undefined
          )
        )
    },

    /**
     * Users with a daily_use from `from` to `to` (today). user_activity keeps only each user's
     * latest day, so no upper bound: a user active today who also sent an event stamped
     * tomorrow (allowed, up to 24 h ahead) would otherwise drop out of the count.
     */
    async activeUsersBetween(projectId: string, from: string, _to: string): Promise<number> {
      const [row] = await db
        .select({ n: sql<number>`count(*)::int` })
        .from(userActivity)
        .where(and(eq(userActivity.projectId, projectId), gte(userActivity.lastActiveDay, from)))
      return row!.n
    },

    async lastEventAt(projectId: string): Promise<Date | null> {
      const [row] = await db.select({ at: projectEventStats.lastEventAt }).from(projectEventStats).where(eq(projectEventStats.projectId, projectId))
      return row?.at ?? null
    },

    /**
     * One user's events, newest first, strictly before the cursor (occurred_at, id). The stream
     * index leads with the day (cheap ingestion), so the user's events are read day by day, newest
     * day first, from the days the project has events on, stopping once the page is full. A day in
     * the project's time zone never runs backwards, so day order agrees with time order.
     */
    async stream(projectId: string, distinctId: string, limit: number, before?: { at: Date; id: number }) {
      const cursorAt = before ? sql`${before.at.toISOString()}::timestamptz` : undefined
      const days = db
        .selectDistinct({ day: dailyEventCounts.day })
        .from(dailyEventCounts)
        .where(
          and(
            eq(dailyEventCounts.projectId, projectId),
            cursorAt ? sql`${dailyEventCounts.day} <= (${cursorAt} at time zone (select timezone from projects where id = ${projectId}))::date` : undefined
          )
        )
        // Newest day first here too, so the outer sort is incremental and stops at a full page.
        .orderBy(desc(dailyEventCounts.day))
        .as('days')
      const page = db
        .select()
        .from(events)
        .where(
          and(
            eq(events.projectId, projectId),
            sql`${events.day} = ${days.day}`,
            eq(events.distinctId, distinctId),
            before ? sql`(${events.occurredAt}, ${events.id}) < (${cursorAt}, ${before.id})` : undefined
          )
        )
        .orderBy(desc(events.occurredAt), desc(events.id))
        .limit(limit)
        .as('page')
      return db
        .select({
          id: page.id, uuid: page.uuid, event: page.event, distinctId: page.distinctId,
          occurredAt: page.occurredAt, receivedAt: page.receivedAt, properties: page.properties,
        })
        .from(days)
        .crossJoinLateral(page)
        .orderBy(desc(days.day), desc(page.occurredAt), desc(page.id))
        .limit(limit)
    },
  }
}
