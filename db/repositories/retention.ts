// Retention read from the per-user rollups kept at ingestion, never from the raw events:
// user_event_firsts gives a cohort's users (its index by first day), and daily_event_users'
// per-user index gives each of them the days of the return event: one index probe per cohort
// user. Why these and not cohort cells kept at ingestion: docs/design.md, "Exact retention".
import { lazily, sql, PgDialect } from '../orm.ts'
import { preparedRows, type Queryable } from '../client.ts'

export type RetentionUnit = 'day' | 'week'

export interface RetentionRow {
  /** The cohort's first day (day) or its week's Monday (week). */
  cohort: string
  users: number
  /** [period, users who returned in it], periods in order, those with nobody left out. */
  returned: [number, number][]
}

const P = sql.placeholder

/**
 * One statement for a unit. `span` is how many days after the cohort's start its last period ends
 * (exclusive). A day cohort is its users' first day, period k the day first + k; a week cohort is
 * the ISO week (Monday, isodow 1) of the first day, period k the week k after it, whichever day
 * of the cohort week the user started on. A user has one row per day in daily_event_users, so a
 * day period counts rows; a week counts each user once.
 */
function statement(unit: RetentionUnit) {
  const cohort = unit === 'day' ? sql`f.first_day` : sql`(f.first_day - (extract(isodow from f.first_day)::int - 1))`
  const period = unit === 'day' ? sql`(d.day - c.cohort)` : sql`((d.day - c.cohort) / 7)`
  const users = unit === 'day' ? sql`count(*)` : sql`count(distinct c.distinct_id)`
  // A day's returns start on the first day; a week's on its Monday (days before the first day count).
  const lower = unit === 'day' ? sql`c.first_day` : sql`c.cohort`
  return new PgDialect().sqlToQuery(sql`
    with cohort_users as (
      select f.distinct_id, f.first_day, ${cohort} as cohort
      from user_event_firsts f
      where f.project_id = ${P('projectId')} and f.event = ${P('start')}
        and f.first_day >= ${P('from')}::date and f.first_day <= ${P('to')}::date
    ),
    returns as (
      select c.cohort, ${period}::int as k, ${users}::int as n
      from cohort_users c
      join daily_event_users d
        on d.project_id = ${P('projectId')} and d.event = ${P('return')} and d.distinct_id = c.distinct_id
       and d.day >= ${lower} and d.day < c.cohort + ${P('span')}::int
      group by 1, 2
    ),
    per_cohort as (
      select cohort, json_agg(json_build_array(k, n) order by k) as ks from returns group by cohort
    ),
    sizes as (
      select cohort, count(*)::int as users from cohort_users group by cohort
    )
    select s.cohort::text, s.users, coalesce(p.ks, '[]'::json)::text
    from sizes s left join per_cohort p using (cohort)
    order by s.cohort`)
}

export function createRetentionRepository(db: Queryable) {
  const prepare = (unit: RetentionUnit) =>
    lazily(() =>
      preparedRows(db, { toSQL: () => statement(unit) }, `retention_${unit}`, ([cohort, users, returned]): RetentionRow => ({
        cohort: cohort as string,
        users: Number(users),
        returned: JSON.parse(returned as string) as [number, number][],
      }))
    )
  const prepared = { day: prepare('day'), week: prepare('week') }
  return {
    /**
     * The cohorts of `start` whose users' first day is in [from, to] (a week range from a Monday
     * to a Sunday), each with its users and, per period 0..periods, those with a `ret` event in it.
     * Only cohorts with users; oldest first.
     */
    async cohorts(projectId: string, args: { unit: RetentionUnit; start: string; ret: string; from: string; to: string; periods: number }): Promise<RetentionRow[]> {
      const span = (args.periods + 1) * (args.unit === 'day' ? 1 : 7)
      return prepared[args.unit]().execute({ projectId, start: args.start, return: args.ret, from: args.from, to: args.to, span })
    },
  }
}
