import { and, desc, eq, lazily, sql, PgDialect } from '../orm.ts'
import { isoMillis, preparedRows, rowsOf, type Queryable } from '../client.ts'
import { withEventMonths } from './partitions.ts'
import { dayAfter } from '../days.ts'
import { DAILY_USE } from '../../schemas/metrics.ts'
import { COUNTER_SHARDS, dailyEventCounts, events, projects } from '../schema.ts'

export interface IncomingEvent {
  uuid: string
  event: string
  distinct_id: string
  timestamp: string
  properties: Record<string, unknown>
}

/** The project's seq, which leads the event indexes (evaluated once per statement). */
export const projectSeq = (projectId: string) => sql<number>`(select ${projects.seq} from ${projects} where ${projects.id} = ${projectId})`

const P = sql.placeholder

/**
 * The counter rows of [from, to], of the `names` events only or of all, as they are: each row's
 * day as its offset from `from` (an int: date_out per row cost more), its shard's counts unsummed.
 * The sums per (day, event) are made here (sumCounts), not by a GROUP BY: the aggregate (its
 * node set up per execution, then sum(bigint)'s numeric per group and numeric_out) was ~35 % of
 * the statement's PostgreSQL CPU (bench/daily-counts-sql.ts), and after fold_counter_shards a
 * finished day is one row per event anyway: only today (and late events not yet folded) has a
 * row per shard.
 */
const dailyCountsQuery = (withNames: boolean) => new PgDialect().sqlToQuery(sql`
  select day - ${P('from')}::date, event, events, unique_users
  from daily_event_counts
  where project_id = ${P('projectId')} and day >= ${P('from')}::date and day <= ${P('to')}::date
    ${withNames ? sql`and event = any(${P('names')}::text[])` : sql``}`)

/**
 * dailyCountsQuery's rows summed per (day, event), in the order each (day, event) first comes.
 * Exact: the counters are integers far below 2^53.
 */
export function sumCounts(from: string, rows: readonly unknown[][]): DailyCount[] {
  const counts: DailyCount[] = []
  // Each (day, event) by a number: its event's index among those seen, times a span longer than
  // any read (800 days at most: MAX_RANGE_DAYS and the period before it), plus the day's offset.
  const events = new Map<string, number>()
  const seen = new Map<number, DailyCount>()
  for (const [offset, event, n, users] of rows) {
    let e = events.get(event as string)
    if (e === undefined) events.set(event as string, (e = events.size))
    if ((offset as number) >= 100_000) throw new RangeError(`sumCounts reads at most 100,000 days (offset ${offset as number})`)
    const key = e * 100_000 + (offset as number)
    const count = seen.get(key)
    if (count) {
      count.events += Number(n)
      count.uniqueUsers += Number(users)
    } else {
      const c = { day: dayAfter(from, offset as number), event: event as string, events: Number(n), uniqueUsers: Number(users) }
      seen.set(key, c)
      counts.push(c)
    }
  }
  return counts
}

/** Everything get_overview reads, in one statement: scalar subqueries over the rollups. */
const overviewQuery = () => new PgDialect().sqlToQuery(sql`
  select
    (select coalesce(json_agg(json_build_array(c.day, c.event, c.users)), '[]'::json)::text
     from (select day, event, sum(unique_users) as users
           from daily_event_counts
           where project_id = ${P('projectId')} and day >= ${P('from')}::date and day <= ${P('to')}::date
             and event = any(${P('names')}::text[])
           group by 1, 2) c),
    (select coalesce(sum(users), 0) from user_activity_days where project_id = ${P('projectId')} and day >= ${P('since7')}::date),
    (select coalesce(sum(users), 0) from user_activity_days where project_id = ${P('projectId')} and day >= ${P('since30')}::date),
    (select coalesce(json_agg(json_build_array(t.status, t.evaluation, t.n)), '[]'::json)::text
     from (select status, evaluation, sum(n) as n from opportunity_counts where project_id = ${P('projectId')} group by 1, 2) t),
    (select max(last_event_at) from project_event_stats where project_id = ${P('projectId')})
  from projects where id = ${P('projectId')}`)

export interface DailyCount { day: string; event: string; events: number; uniqueUsers: number }

export interface OverviewRead {
  counts: { day: string; event: string; uniqueUsers: number }[]
  unique7: number
  unique30: number
  totals: { status: string; evaluation: '' | 'useful' | 'not_useful'; n: number }[]
  lastEventAt: Date | null
}

/**
 * The reads every metrics call makes: SQL built once (not per call), sent as named statements
 * (PostgreSQL parses and plans them once per connection) and read as array rows, which need no
 * drizzle mapping (preparedRows). The sums are bigint sums (numeric): the driver hands them over
 * as text.
 */
function preparedReads(db: Queryable) {
  const asIs = (values: unknown[]) => values
  return {
    dailyCounts: lazily(() => preparedRows(db, { toSQL: () => dailyCountsQuery(false) }, 'daily_counts', asIs)),
    dailyCountsOf: lazily(() => preparedRows(db, { toSQL: () => dailyCountsQuery(true) }, 'daily_counts_of', asIs)),
    overview: lazily(() =>
      preparedRows(db, { toSQL: overviewQuery }, 'overview', ([counts, unique7, unique30, totals, last]): OverviewRead => ({
        counts: (JSON.parse(counts as string) as [string, string, number | string][]).map(([day, event, users]) => ({ day, event, uniqueUsers: Number(users) })),
        unique7: Number(unique7),
        unique30: Number(unique30),
        totals: (JSON.parse(totals as string) as [string, OverviewRead['totals'][number]['evaluation'], number | string][]).map(([status, evaluation, n]) => ({ status, evaluation, n: Number(n) })),
        lastEventAt: last === null ? null : new Date(isoMillis(last as string)),
      }))
    ),
  }
}

/** This connection's counter shard (see COUNTER_SHARDS). */
const SHARD = sql.raw(`(pg_backend_pid() % ${COUNTER_SHARDS})::smallint`)

const PROJECT = sql.placeholder('projectId')
const PAYLOAD = sql.placeholder('payload')
const NOW = sql.placeholder('now')

/**
 * Stores a batch and updates every rollup in ONE statement, so a batch is all or nothing.
 * Idempotent by uuid (the unique index). Exact unique counts: a (project, event, day, user)
 * pair increments `unique_users` only the first time it is inserted into daily_event_users.
 * Retention's queue gets one row per batch (its first sightings as arrays, each new
 * daily_event_users row marked with that row's id: migration 0022), not one per first sighting.
 * Rows are written in key order so concurrent batches lock in the same order and cannot
 * deadlock; the counters are sharded so that they do not make batches wait at all.
 * Built once, with placeholders (the payload goes in as text). Deliberately not a named
 * prepared statement: run that way it was measured at 2.5 s of backend CPU per 1000 events
 * (against ~0.1 s; bench:ingest, batches of 100 after a truncate), most likely a generic plan
 * made while the tables were nearly empty; planned per batch it cannot go stale.
 */
const INGEST = new PgDialect().sqlToQuery(sql`
        with project as (
          -- The share lock waits out a time-zone change (which rebuilds the rollups) and reads the zone it left.
          select timezone, seq from projects where id = ${PROJECT} for share
        ),
        input as (
          select x.*, (x.timestamp at time zone project.timezone)::date as day, project.seq
          from project, jsonb_to_recordset(${PAYLOAD}::text::jsonb)
            as x(uuid uuid, event text, distinct_id text, timestamp timestamptz, properties jsonb)
        ),
        ins as (
          insert into events (project_id, project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at)
          select ${PROJECT}, seq, uuid, event, distinct_id, timestamp, day, coalesce(properties, '{}'::jsonb), ${NOW}::timestamptz
          from input order by uuid
          -- The partition key is in the unique index: one event per uuid and day (design.md).
          on conflict (project_seq, uuid, day) do nothing
          returning event, distinct_id, day, occurred_at
        ),
        batch as (
          -- The id of this batch's retention_queue row, which marks its first sightings (below).
          select nextval('retention_queue_id_seq') as id
        ),
        firsts as (
          insert into daily_event_users (project_id, event, day, distinct_id, batch)
          select ${PROJECT}, event, day, distinct_id, (select id from batch) from (select distinct event, day, distinct_id from ins) d
          order by event, day, distinct_id
          on conflict do nothing
          returning event, day, distinct_id
        ),
        active as (
          -- From first sightings only: a user's last active day is the latest of their daily_use
          -- days in daily_event_users, so a day seen before (by this statement's unique check,
          -- which waits for a concurrent batch's commit) cannot move it.
          -- Only users whose last active day moves: ON CONFLICT DO UPDATE locks the row even when
          -- its WHERE is false, and the heavy users are in every concurrent batch.
          insert into user_activity (project_id, distinct_id, last_active_day)
          select ${PROJECT}, a.distinct_id, a.day
          from (select distinct_id, max(day) as day from firsts where event = ${DAILY_USE} group by distinct_id) a
          where not exists (
            select 1 from user_activity u
            where u.project_id = ${PROJECT} and u.distinct_id = a.distinct_id and u.last_active_day >= a.day)
          order by a.distinct_id
          on conflict (project_id, distinct_id)
            do update set last_active_day = excluded.last_active_day
            where user_activity.last_active_day < excluded.last_active_day
          returning 1
        ),
        queued as (
          -- The batch's first sightings, for retention_apply() to fold into the retention cells:
          -- one row of arrays (not one a first sighting; migration 0022), only when there are some.
          insert into retention_queue (project_id, id, events, days, distinct_ids) overriding system value
          select ${PROJECT}, (select id from batch), array_agg(event), array_agg(day), array_agg(distinct_id) from firsts
          having count(*) > 0
          returning 1
        ),
        counted as (
          insert into daily_event_counts (project_id, day, event, shard, events, unique_users)
          select ${PROJECT}, c.day, c.event, ${SHARD}, c.n, coalesce(f.n, 0)
          from (select day, event, count(*) as n from ins group by day, event) c
          left join (select day, event, count(*) as n from firsts group by day, event) f using (day, event)
          order by c.day, c.event
          on conflict (project_id, day, event, shard) do update set
            events = daily_event_counts.events + excluded.events,
            unique_users = daily_event_counts.unique_users + excluded.unique_users
          returning 1
        ),
        stats as (
          insert into project_event_stats (project_id, shard, last_event_at, events)
          select ${PROJECT}, ${SHARD}, max(occurred_at), count(*) from ins having count(*) > 0
          on conflict (project_id, shard) do update set
            last_event_at = greatest(project_event_stats.last_event_at, excluded.last_event_at),
            events = project_event_stats.events + excluded.events
          returning 1
        )
        select (select count(*) from ins)::int as accepted,
               (select count(*) from active)::int + (select count(*) from queued)::int + (select count(*) from counted)::int + (select count(*) from stats)::int as touched
      `)

/** The ingest statement's text ($1 project id, $2 the batch as JSON text, $3 now): for bench/ingest-steps.ts. */
export const INGEST_SQL = INGEST.sql

export function createEventsRepository(db: Queryable) {
  const prepared = preparedReads(db)
  return {
    async ingest(projectId: string, batch: IncomingEvent[], now: Date): Promise<{ accepted: number; duplicates: number }> {
      // The months of the batch get their partitions first (no statement when they are known).
      const result = await withEventMonths(db, batch.map((e) => e.timestamp), () => db._.session
        .prepareQuery(INGEST, undefined, undefined, false)
        .execute({ projectId, payload: JSON.stringify(batch), now: now.toISOString() }))
      const accepted = Number(rowsOf<{ accepted: number }>(result)[0]!.accepted)
      return { accepted, duplicates: batch.length - accepted }
    },

    /** Per-day, per-event counters for [from, to] (inclusive), optionally some events only. */
    async dailyCounts(projectId: string, from: string, to: string, names?: string[]): Promise<DailyCount[]> {
      return sumCounts(from, await (names ? prepared.dailyCountsOf().execute({ projectId, from, to, names }) : prepared.dailyCounts().execute({ projectId, from, to })))
    },

    /**
     * What the overview reads, in one round trip: per-day unique users of `names` in [from, to],
     * the users whose last daily_use is on `since7` / `since30` or later (a sum over the per-day
     * rollup user_activity_days, so it costs the days, not the users; no upper bound: a user whose
     * last day is tomorrow, allowed up to 24 h ahead, still counts), the opportunity totals by
     * status and evaluation, and the last event's time.
     */
    async overview(projectId: string, args: { from: string; to: string; names: string[]; since7: string; since30: string }): Promise<OverviewRead | null> {
      const [row] = await prepared.overview().execute({ projectId, ...args })
      return row ?? null
    },

    /**
     * Folds the counter shards of every project's finished days (before its "today" at `now`)
     * into one row a day (fold_counter_shards, migration 0021): exact while ingestion runs, and
     * it never waits on a batch (what a batch holds is folded next time). Returns the rows it
     * wrote; 0 when another fold is running.
     */
    async foldShards(now: Date): Promise<number> {
      const [row] = rowsOf<{ n: number }>(await db.execute(sql`select fold_counter_shards(${now.toISOString()}::timestamptz) as n`))
      return Number(row!.n)
    },

    /**
     * One user's events, newest first, strictly before the cursor (occurred_at, id). The stream
     * index leads with the day (cheap ingestion), so the user's events are read day by day, newest
     * day first, from the days the project has events on, stopping once the page is full: one index
     * probe per day with events until the page fills (≈ 1 ms per few hundred days). Day order is time
     * order because local dates do not run backwards — in every zone since 2011; a few zones did
     * briefly before (e.g. America/St_Johns), where events of that hour may list out of order.
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
            eq(events.projectSeq, projectSeq(projectId)),
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
          id: page.id,
          uuid: page.uuid,
          event: page.event,
          distinctId: page.distinctId,
          occurredAt: page.occurredAt,
          receivedAt: page.receivedAt,
          properties: page.properties,
        })
        .from(days)
        .crossJoinLateral(page)
        .orderBy(desc(days.day), desc(page.occurredAt), desc(page.id))
        .limit(limit)
    },
  }
}
