import { and, desc, eq, gte, lte, inArray, sql } from 'drizzle-orm'
import { rowsOf, type Db } from '../client.ts'
import { dailyEventCounts, events, projectEventStats, userActivity } from '../schema.ts'

export interface IncomingEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

/** The event names that feed daily-ops (DESIGN §5). */
export const SIGNUP = 'signup'
export const DAILY_USE = 'daily_use'

export function createEventsRepository(db: Db) {
  return {
    /**
     * Stores a batch and updates every rollup in ONE statement, so a batch is all or nothing.
     * Exact unique counts: a (project, event, day, user) pair increments `unique_users` only
     * the first time it is inserted into daily_event_users. Rows are written in key order so
     * concurrent batches lock in the same order and cannot deadlock.
     */
    async ingest(projectId: string, batch: IncomingEvent[], now: Date): Promise<{ accepted: number; duplicates: number }> {
      const payload = JSON.stringify(batch)
      const result = await db.execute<{ accepted: number }>(sql`
        with project as (
          -- The share lock waits out a time-zone change (which rebuilds the rollups) and reads the zone it left.
          select timezone from projects where id = ${projectId} for share
        ),
        input as (
          select * from jsonb_to_recordset(${payload}::jsonb)
            as x(uuid uuid, event text, distinct_id text, timestamp timestamptz, properties jsonb)
        ),
        ins as (
          insert into events (project_id, uuid, event, distinct_id, occurred_at, day, properties, received_at)
          select ${projectId}, uuid, event, distinct_id, timestamp, (timestamp at time zone project.timezone)::date,
                 coalesce(properties, '{}'::jsonb), ${now.toISOString()}::timestamptz
          from input, project order by uuid
          on conflict (project_id, uuid) do nothing
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

    /** One user's events, newest first, strictly before the cursor (occurred_at, id). */
    async stream(projectId: string, distinctId: string, limit: number, before?: { at: Date; id: number }) {
      return db
        .select()
        .from(events)
        .where(
          and(
            eq(events.projectId, projectId),
            eq(events.distinctId, distinctId),
            before ? sql`(${events.occurredAt}, ${events.id}) < (${before.at.toISOString()}::timestamptz, ${before.id})` : undefined
          )
        )
        .orderBy(desc(events.occurredAt), desc(events.id))
        .limit(limit)
    },
  }
}
