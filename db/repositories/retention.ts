// Retention, answered from the cells that retention_apply() keeps exact (migration 0018,
// db/schema.ts retention_queue): a read first folds what is queued for the project, then sums a
// few rows — the cohorts' sizes from retention_cohorts and their returns from retention_cells —
// so its cost is the cohorts and periods asked for, never the users in them, and it never reads
// the raw events. Why cells and not per-user rollups: docs/design.md, "Exact retention".
import { lazily, sql, PgDialect } from '../orm.ts'
import { preparedRows, rowsOf, type Queryable } from '../client.ts'

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
 * One statement for a unit. A day cohort is its users' first day of the start event, period k the
 * day first + k; a week cohort is the ISO week (Monday) of the first day, period k the k-th week
 * after it. A return counts on the first day or later (in week 0, the days of the cohort week
 * before a user's first day do not count). Both as retention_apply() keeps them.
 */
function statement(unit: RetentionUnit) {
  const cohort = unit === 'day' ? sql`c.day` : sql`retention_week(c.day)`
  return new PgDialect().sqlToQuery(sql`
    with sizes as (
      select ${cohort} as cohort, sum(c.users)::int as users
      from retention_cohorts c
      where c.project_id = ${P('projectId')} and c.event = ${P('start')}
        and c.day >= ${P('from')}::date and c.day <= ${P('to')}::date
      group by 1 having sum(c.users) > 0
    ),
    returns as (
      select r.cohort, json_agg(json_build_array(r.k, r.users) order by r.k) as ks
      from retention_cells r
      where r.project_id = ${P('projectId')} and r.start_event = ${P('start')} and r.return_event = ${P('return')}
        and r.grain = ${unit} and r.cohort >= ${P('from')}::date and r.cohort <= ${P('to')}::date
        and r.k <= ${P('periods')}::int and r.users > 0
      group by r.cohort
    )
    select s.cohort::text, s.users, coalesce(r.ks, '[]'::json)::text
    from sizes s left join returns r using (cohort)
    order by s.cohort`)
}

export function createRetentionRepository(db: Queryable) {
  const prepare = (unit: RetentionUnit) =>
    lazily(() =>
      preparedRows(db, { toSQL: () => statement(unit) }, `retention_${unit}`, ([cohort, users, returned]): RetentionRow => ({
        cohort: cohort as string,
        users: Number(users),
        returned: (JSON.parse(returned as string) as [number, number][]).map(([k, n]) => [k, Number(n)]),
      }))
    )
  const prepared = { day: prepare('day'), week: prepare('week') }
  const repo = {
    /**
     * Folds the project's queued first sightings into the cells, in slices, until no slice is
     * full (retention_apply, migration 0018: one caller per project at a time). Returns how many.
     */
    async fold(projectId: string, slice = 20_000): Promise<number> {
      let total = 0
      for (;;) {
        const [row] = rowsOf<{ n: number }>(await db.execute(sql`select retention_apply(${projectId}, ${slice}) as n`))
        const n = Number(row!.n)
        total += n
        if (n < slice) return total
      }
    },

    /** The projects with first sightings queued (a loose index scan of the queue's key). */
    async queuedProjects(): Promise<string[]> {
      const result = await db.execute(sql`
        with recursive p as (
          (select project_id from retention_queue order by project_id limit 1)
          union all
          select (select q.project_id from retention_queue q where q.project_id > p.project_id order by q.project_id limit 1)
          from p where p.project_id is not null)
        select project_id from p where project_id is not null`)
      return rowsOf<{ project_id: string }>(result).map((r) => r.project_id)
    },

    /**
     * The cohorts of `start` whose users' first day is in [from, to] (a week range from a Monday
     * to a Sunday), each with its users and, per period 0..periods, those with a `ret` event in it.
     * Only cohorts with users; oldest first. What is queued is folded in first.
     */
    async cohorts(projectId: string, args: { unit: RetentionUnit; start: string; ret: string; from: string; to: string; periods: number }): Promise<RetentionRow[]> {
      await repo.fold(projectId)
      return prepared[args.unit]().execute({ projectId, start: args.start, return: args.ret, from: args.from, to: args.to, periods: args.periods })
    },
  }
  return repo
}
