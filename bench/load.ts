// Bulk data for the benchmark, generated on the PostgreSQL server with generate_series.
// Every "random" choice is a hash of the row number (hashint8extended), so a given size gives
// the same users, days, names and statuses on every run; only event uuids are random.
// Raw events are inserted first; the rollup tables are then built from them with the
// aggregations that the ingest statement in db/repositories/events.ts maintains incrementally,
// and `verifyRollupsByIngestion` proves the two agree by re-ingesting through that very code.
import type { FastifyInstance } from 'fastify'
import type { Sql } from 'postgres'
import { performance } from 'node:perf_hooks'

export interface Dataset {
  projectId: string
  timeZone: string
  submittedBy: string
  events: number
  users: number
  days: number
  opportunities: number
  /** The instant the data ends at (the real clock: the app's windows must hit the data). */
  now: Date
  /** The project's calendar date of `now`. */
  today: string
}

/** Uniform in [0, 1) from a row number and a seed: the top 53 bits of a 64-bit hash. */
const h = (expr: string, seed: number) => `((hashint8extended(${expr}, ${seed}) & 9007199254740991)::float8 / 9007199254740992.0)`

/** Runs `fn` over `items` with at most `jobs` at once, in order of start. */
export async function runPool<T>(items: T[], jobs: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, async () => {
      while (next < items.length) {
        const i = next++
        await fn(items[i]!, i)
      }
    })
  )
}

function chunks(total: number, size: number): { lo: number; hi: number }[] {
  const out: { lo: number; hi: number }[] = []
  for (let lo = 1; lo <= total; lo += size) out.push({ lo, hi: Math.min(total, lo + size - 1) })
  return out
}

export interface SecondaryIndex {
  name: string
  def: string
}

/**
 * Drops the indexes of `table` that back no constraint, to build them once after the load
 * (far faster than maintaining them row by row); `createIndexes` puts back the exact definitions.
 */
export async function dropSecondaryIndexes(sql: Sql, table: string): Promise<SecondaryIndex[]> {
  const rows = await sql<SecondaryIndex[]>`
    select c.relname as name, pg_get_indexdef(i.indexrelid) as def
    from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = ${table}::regclass
      and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
    order by c.relname`
  for (const r of rows) await sql.unsafe(`drop index "${r.name}"`)
  return [...rows]
}

export async function createIndexes(sql: Sql, indexes: SecondaryIndex[], jobs: number): Promise<void> {
  await runPool(indexes, jobs, async (ix) => {
    await sql.unsafe(ix.def)
  })
}

export async function indexDefinitions(sql: Sql, tables: string[]): Promise<string[]> {
  const rows = await sql<{ def: string }[]>`
    select pg_get_indexdef(i.indexrelid) as def from pg_index i
    where i.indrelid = any(${tables}::regclass[]) order by 1`
  return rows.map((r) => r.def)
}

/**
 * Raw events, in chunks on `jobs` connections. Users 0 … users-1 each sign up once (events
 * 1 … users) on a day skewed towards the start of the window; every other event belongs to a
 * user picked with a skew (low numbers are the heavy users) and falls on a day from that user's
 * signup to today. Times are whole milliseconds, as JSON timestamps are; today's stop at `now`.
 */
export async function loadEvents(sql: Sql, d: Dataset, jobs: number, chunkSize: number, progress: (done: number) => void) {
  const start = addDays(d.today, 1 - d.days)
  let done = 0
  // The month partitions of the window (migration 0020), as the app makes them ahead.
  await sql`select events_ensure_partitions(${start}::date, ${d.today}::date)`
  await runPool(chunks(d.events, chunkSize), jobs, async ({ lo, hi }) => {
    await sql.unsafe(
      `with k as (
         -- The local midnights of the window, computed once (a time-zone conversion per row is costly).
         select array_agg((($6::date + n)::timestamp at time zone $7::text) order by n) as midnights,
                extract(epoch from $8::timestamptz - (($6::date + $5::int - 1)::timestamp at time zone $7::text))::float8 * 1000 as today_ms
         from generate_series(0, $5::int - 1) n
       )
       insert into events (project_id, project_seq, uuid, event, distinct_id, occurred_at, day, properties, received_at)
       select $1::text, (select seq from projects where id = $1::text), gen_random_uuid(), c.event, 'user_' || a.u, t.at, (t.at at time zone $7::text)::date,
              case c.event
                when 'page_view' then jsonb_build_object('path', '/docs/' || (g.i % 40))
                when 'purchase' then jsonb_build_object('amount_cents', 500 + (g.i % 50) * 100, 'currency', 'USD')
                else '{}'::jsonb
              end,
              t.at
       from k cross join generate_series($2::bigint, $3::bigint) g(i)
       cross join lateral (select case when g.i <= $4::bigint then g.i - 1
                                       else floor($4::bigint * power(${h('g.i', 2)}, 2))::bigint end as u,
                                  ${h('g.i', 5)} as k) a
       cross join lateral (select floor($5::int * power(${h('a.u', 1)}, 1.5))::int as s) b
       cross join lateral (
         select case when g.i <= $4::bigint then b.s else b.s + floor(($5::int - b.s) * ${h('g.i', 3)})::int end as d,
                case when g.i <= $4::bigint then 'signup'
                     when a.k < 0.9 then 'daily_use'
                     when a.k < 0.965 then 'page_view'
                     when a.k < 0.99 then 'invite_sent'
                     else 'purchase' end as event) c
       cross join lateral (
         select least($8::timestamptz, k.midnights[c.d + 1] + floor(${h('g.i', 4)} *
                  case when c.d = $5::int - 1 then k.today_ms else 86400000 end) * interval '1 millisecond') as at) t`,
      [d.projectId, lo, hi, d.users, d.days, start, d.timeZone, d.now.toISOString()]
    )
    done += hi - lo + 1
    progress(done)
  })
}

/** The rollups, each as the aggregate of what the ingest statement adds up batch by batch. */
export const rollupSteps: { table: string; sql: string }[] = [
  {
    // A (project, event, day, user) row exists once that user did that event that day.
    // Inserted in key order (the index is appended to, not searched). One project, so its id is
    // left out of the sort; byte order ("C") is the key order of these ASCII values and sorts faster.
    table: 'daily_event_users',
    sql: `insert into daily_event_users (project_id, event, day, distinct_id)
          select project_id, event, day, distinct_id from events where project_id = $1
          group by 1, 2, 3, 4 order by event collate "C", day, distinct_id collate "C"`,
  },
  {
    // events = raw count; unique_users = the number of first sightings = daily_event_users rows.
    table: 'daily_event_counts',
    sql: `insert into daily_event_counts (project_id, day, event, events, unique_users)
          select c.project_id, c.day, c.event, c.n, coalesce(f.n, 0)
          from (select project_id, day, event, count(*) as n from events where project_id = $1 group by 1, 2, 3) c
          left join (select project_id, day, event, count(*) as n from daily_event_users where project_id = $1 group by 1, 2, 3) f
            using (project_id, day, event)
          order by 1, 2, 3`,
  },
  {
    // The latest day of daily_use per user (greatest() over batches = max over all).
    table: 'user_activity',
    sql: `insert into user_activity (project_id, distinct_id, last_active_day)
          select project_id, distinct_id, max(day) from daily_event_users
          where project_id = $1 and event = 'daily_use' group by 1, 2 order by distinct_id collate "C"`,
  },
  {
    // Retention's cells and cohorts, as retention_apply() folds the first sightings in.
    table: 'retention_cells',
    sql: 'select retention_rebuild($1)',
  },
  {
    table: 'project_event_stats',
    sql: `insert into project_event_stats (project_id, last_event_at, events)
          select project_id, max(occurred_at), count(*) from events where project_id = $1 group by 1`,
  },
]

export async function buildRollup(sql: Sql, step: { sql: string }, projectId: string) {
  await sql.unsafe(step.sql, [projectId])
}

/**
 * Opportunities in chunks (so the statement-level counting trigger runs once per chunk and its
 * ON CONFLICT path adds chunks up): five contribution types, six statuses, three evaluations,
 * received over the `days` before `now`; recent-looking text of realistic length.
 */
export async function loadOpportunities(sql: Sql, d: Dataset, jobs: number, chunkSize: number, progress: (done: number) => void) {
  let done = 0
  await runPool(chunks(d.opportunities, chunkSize), jobs, async ({ lo, hi }) => {
    await sql.unsafe(
      `insert into opportunities (id, project_id, contribution_type, key_information, reason, suggested_action, source_url,
                                  external_id, submitted_by, received_at, evaluation, status, review_note, review_updated_at)
       select 'opp_' || substr(md5('growthdesk-bench-' || g.i), 1, 20), $1::text, x.type,
              (array['A founder', 'A developer', 'A marketer', 'A student', 'A designer', 'An agency owner',
                     'A product manager', 'A data analyst', 'A teacher', 'A recruiter'])[1 + (g.i % 10)::int]
                || ' on ' ||
              (array['Reddit', 'Hacker News', 'X', 'LinkedIn', 'a Discord server', 'GitHub Discussions', 'Product Hunt',
                     'a Slack community', 'Stack Overflow', 'a newsletter'])[1 + (g.i / 10 % 10)::int]
                || ' ' ||
              (array['asks for a simpler way to track daily active users', 'compares analytics tools for a small SaaS',
                     'complains that their current dashboard is too slow', 'wants exact unique-user counts without sampling',
                     'looks for an open-source alternative to a paid tool', 'asks how to measure retention after launch',
                     'needs daily reports in their own time zone', 'is moving growth metrics out of spreadsheets',
                     'asks which events to track before a launch', 'wants an MCP server for their product metrics'])[1 + (g.i / 100 % 10)::int]
                || ' (thread ' || g.i || ', ' || (10 + g.i % 490) || ' upvotes).',
              r.reasons[1 + (g.i % 8)::int] || ' ' || r.reasons[1 + (g.i / 8 % 8)::int],
              (array['Reply with a short walkthrough and a link to the docs.', 'Send a direct message offering a demo.',
                     'Write a blog post that answers the question and share it in the thread.', 'Invite them to the beta.',
                     'Add the use case to the landing page.', 'Ask for feedback on the onboarding flow.'])[1 + (g.i / 3 % 6)::int],
              'https://example.com/t/' || g.i,
              case when hx.x < 0.6 then 'ext-' || g.i end,
              $4::text, x.received_at, e.evaluation, x.status,
              case x.status when 'adopted' then 'Adopted: added to the launch plan.' when 'ignored' then 'Not our audience.'
                            when 'done' then 'Replied in the thread.' else '' end,
              case when x.status = 'pending' and e.evaluation = '' then null
                   else least($5::timestamptz, x.received_at + ${h('g.i', 14)} * interval '5 days') end
       from generate_series($2::bigint, $3::bigint) g(i)
       cross join (select array['Matches our audience and stated goals.', 'The thread is recent and still active.',
                                'They describe the exact problem our value proposition addresses.',
                                'Several replies ask the same question.', 'The author has a following in our niche.',
                                'A competitor is mentioned negatively.', 'They already use a tool we integrate with.',
                                'Early-stage team, likely to try new tools.'] as reasons) r
       cross join lateral (select ${h('g.i', 11)} as t, ${h('g.i', 12)} as s, ${h('g.i', 13)} as e, ${h('g.i', 10)} as r,
                                  ${h('g.i', 15)} as x) hx
       cross join lateral (
         select case when hx.t < 0.35 then 'potential_user_opportunity' when hx.t < 0.55 then 'content_opportunity'
                     when hx.t < 0.75 then 'community_feedback' when hx.t < 0.9 then 'partnership_opportunity'
                     else 'competitor_signal' end as type,
                case when hx.s < 0.40 then 'pending' when hx.s < 0.55 then 'reviewing' when hx.s < 0.68 then 'contacted'
                     when hx.s < 0.78 then 'adopted' when hx.s < 0.90 then 'ignored' else 'done' end as status,
                $5::timestamptz - hx.r * $6::int * interval '1 day' as received_at) x
       cross join lateral (
         select case when x.status = 'pending'
                     then (case when hx.e < 0.85 then '' when hx.e < 0.95 then 'useful' else 'not_useful' end)
                     else (case when hx.e < 0.2 then '' when hx.e < 0.65 then 'useful' else 'not_useful' end) end as evaluation) e`,
      [d.projectId, lo, hi, d.submittedBy, d.now.toISOString(), d.days]
    )
    done += hi - lo + 1
    progress(done)
  })
}

/** Rows that differ between the trigger-kept counters and a count of the table (0 = exact). */
export async function opportunityCountMismatches(sql: Sql, projectId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    with counted as (
      select contribution_type, status, evaluation, count(*)::bigint as n from opportunities
      where project_id = ${projectId} group by 1, 2, 3
    ), kept as (
      select contribution_type, status, evaluation, n from opportunity_counts where project_id = ${projectId} and n <> 0
    )
    select ((select count(*) from (select * from counted except all select * from kept) a)
          + (select count(*) from (select * from kept except all select * from counted) b))::int as n`
  return row!.n
}

/**
 * The proof that the bulk-built rollups are what ingestion makes: every event of the project is
 * ingested again, in batches of 1000, through the service's own ingest statement into a twin
 * project with the same time zone; the rollups of both must be identical. The twin is
 * deleted afterwards. user_activity_days (kept by triggers on user_activity) is compared as well.
 * Cost: the ingestion of the whole data set, so by default small sizes only.
 */
export async function verifyRollupsByIngestion(app: FastifyInstance, sql: Sql, d: Dataset, workspaceId: string) {
  const created = await app.repos.projects.create({ workspaceId, ownerId: d.submittedBy, name: 'Bench twin', slug: 'bench-twin', timezone: d.timeZone })
  if (!created.ok) throw new Error("The slug 'bench-twin' is taken in this workspace.")
  const twin = created.project
  try {
    const started = performance.now()
    const cursor = sql<{ uuid: string; event: string; distinct_id: string; timestamp: string; properties: Record<string, unknown> }[]>`
      select uuid::text, event, distinct_id, to_char(occurred_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as timestamp, properties
      from events where project_id = ${d.projectId} order by id`.cursor(1000)
    let n = 0
    for await (const rows of cursor) {
      await app.repos.events.ingest(twin.id, rows.map((r) => ({ ...r })), new Date())
      n += rows.length
    }
    await app.repos.retention.fold(twin.id)
    const ingestSeconds = (performance.now() - started) / 1000
    // `source` folds the counter shards (the twin's batches may land in several).
    const compare = async (table: string, columns: string, source = table) => {
      const [row] = await sql.unsafe<{ n: number }[]>(
        `select ((select count(*) from (select ${columns} from ${source} where project_id = $1 except all select ${columns} from ${source} where project_id = $2) a)
              + (select count(*) from (select ${columns} from ${source} where project_id = $2 except all select ${columns} from ${source} where project_id = $1) b))::int as n`,
        [d.projectId, twin.id]
      )
      return { table, differing: row!.n }
    }
    const results = [
      await compare('daily_event_users', 'event, day, distinct_id'),
      await compare('daily_event_counts', 'day, event, events, unique_users',
        '(select project_id, day, event, sum(events) as events, sum(unique_users) as unique_users from daily_event_counts group by 1, 2, 3) s'),
      await compare('user_activity', 'distinct_id, last_active_day'),
      await compare('retention_cells', 'start_event, return_event, grain, cohort, k, users',
        '(select project_id, start_event, return_event, grain, cohort, k, users from retention_cells where users <> 0) s'),
      await compare('retention_cohorts', 'event, day, users', '(select project_id, event, day, users from retention_cohorts where users <> 0) s'),
      await compare('user_activity_days', 'day, users',
        '(select project_id, day, sum(users) as users from user_activity_days group by 1, 2 having sum(users) <> 0) s'),
      await compare('project_event_stats', 'last_event_at, events',
        '(select project_id, max(last_event_at) as last_event_at, sum(events) as events from project_event_stats group by 1) s'),
    ]
    return { events: n, ingestSeconds, results }
  } finally {
    await sql`delete from projects where id = ${twin.id}`
  }
}

export function addDays(day: string, days: number): string {
  const t = new Date(`${day}T00:00:00Z`)
  t.setUTCDate(t.getUTCDate() + days)
  return t.toISOString().slice(0, 10)
}
