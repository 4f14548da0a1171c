// What the rollups of ingestion must equal: a naive count of the raw events. Shared by the
// exactness tests in process (test/project-api/ingestion-exactness.test.ts) and the crash test
// against a killed server (test/ingestion-crash.test.ts).
import type { Test } from 'tap'
import { rowsOf, type Queryable } from '../../db/client.ts'
import { sql } from '../../db/orm.ts'
import { createRetentionRepository } from '../../db/repositories/retention.ts'

/**
 * Every rollup of a project against what a naive count of its raw events says it should be:
 * the per-day counters and unique users (summed over their shards), the first sightings, the
 * last active days and the per-day tallies of them, the event total, and retention's cells and
 * cohorts after retention's queue is folded (which this does, as the app's timer would). Returns
 * the number of events stored.
 */
export async function compareRollups(t: Test, label: string, db: Queryable, project: string): Promise<number> {
  const query = async <T>(q: ReturnType<typeof sql>) => rowsOf<T>(await db.execute(q))
  const [r] = await query<Record<string, number>>(sql`
    select
      (select count(*) from events where project_id = ${project})::int as raw_events,
      (select coalesce(sum(events), 0) from project_event_stats where project_id = ${project})::int as stats_events,
      (select count(*) from (
         select day, event, sum(events)::int as events, sum(unique_users)::int as uniques
         from daily_event_counts where project_id = ${project} group by 1, 2
         except
         select day, event, count(*)::int, count(distinct distinct_id)::int
         from events where project_id = ${project} group by 1, 2) d)::int as counts_differing,
      (select count(*) from (
         select day, event, count(*)::int, count(distinct distinct_id)::int
         from events where project_id = ${project} group by 1, 2
         except
         select day, event, sum(events)::int, sum(unique_users)::int
         from daily_event_counts where project_id = ${project} group by 1, 2) d)::int as counts_missing,
      (select count(*) from (
         (select event, day, distinct_id from daily_event_users where project_id = ${project}
          except select event, day, distinct_id from events where project_id = ${project})
         union all
         (select event, day, distinct_id from events where project_id = ${project}
          except select event, day, distinct_id from daily_event_users where project_id = ${project})) d)::int as firsts_differing,
      (select count(*) from (
         (select distinct_id, last_active_day from user_activity where project_id = ${project}
          except select distinct_id, max(day) from events where project_id = ${project} and event = 'daily_use' group by 1)
         union all
         (select distinct_id, max(day) from events where project_id = ${project} and event = 'daily_use' group by 1
          except select distinct_id, last_active_day from user_activity where project_id = ${project})) d)::int as activity_differing,
      (select count(*) from (
         (select day, sum(users)::int from user_activity_days where project_id = ${project} group by 1 having sum(users) <> 0
          except select last_active_day, count(*)::int from user_activity where project_id = ${project} group by 1)
         union all
         (select last_active_day, count(*)::int from user_activity where project_id = ${project} group by 1
          except select day, sum(users)::int from user_activity_days where project_id = ${project} group by 1 having sum(users) <> 0)) d)::int as active_days_differing`)
  await createRetentionRepository(db).fold(project)
  const [ret] = await query<Record<string, number>>(sql`
    with seen as (select distinct event, day, distinct_id from events where project_id = ${project}),
    firsts as (select distinct_id, event, min(day) as f from seen group by 1, 2),
    naive as (
      select s.event as start_event, x.event as return_event, 'day' as grain, s.f as cohort, x.day - s.f as k, count(*)::int as users
      from firsts s join seen x on x.distinct_id = s.distinct_id and x.day >= s.f group by 1, 2, 4, 5
      union all
      select se, re, 'week', retention_week(f), (wk - retention_week(f)) / 7, count(*)::int
      from (select distinct s.distinct_id, s.event as se, x.event as re, s.f, retention_week(x.day) as wk
            from firsts s join seen x on x.distinct_id = s.distinct_id and x.day >= s.f) w group by 1, 2, 4, 5),
    kept as (select start_event, return_event, grain, cohort, k, users::int from retention_cells where project_id = ${project} and users <> 0)
    select
      (select count(*) from naive)::int as cells,
      (select count(*) from ((select * from naive except all select * from kept) union all (select * from kept except all select * from naive)) d)::int as cells_differing,
      (select count(*) from (
        (select event, f, count(*)::int from firsts group by 1, 2
         except all select event, day, users::int from retention_cohorts where project_id = ${project} and users <> 0)
        union all
        (select event, day, users::int from retention_cohorts where project_id = ${project} and users <> 0
         except all select event, f, count(*)::int from firsts group by 1, 2)) d)::int as cohorts_differing,
      (select count(*) from retention_queue where project_id = ${project})::int as queued`)
  t.same([ret!.cells_differing, ret!.cohorts_differing, ret!.queued], [0, 0, 0], `${label}: retention's ${ret!.cells} cells and its cohorts, nothing left queued`)
  t.equal(r!.stats_events, r!.raw_events, `${label}: the event total`)
  t.same([r!.counts_differing, r!.counts_missing, r!.firsts_differing, r!.activity_differing, r!.active_days_differing], [0, 0, 0, 0, 0],
    `${label}: per-day counts, unique users, first sightings, last active days and their per-day tallies`)
  return r!.raw_events!
}
