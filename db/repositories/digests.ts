// Digests: one schedule per project, what a digest reads (rollups and small indexed counts, never
// raw events), and the claim that makes one digest per period whatever the number of instances.
import { and, eq, sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import { digests, projects } from '../schema.ts'
import { enqueueWebhooks } from './webhooks.ts'
import type { DigestFrequency } from '../../schemas/digests.ts'

export type DigestRow = typeof digests.$inferSelect

/** A schedule that may be due, with what the digest names of its project. */
export interface DigestCandidate extends DigestRow {
  slug: string
  name: string
  timezone: string
}

export function createDigestsRepository(db: Queryable) {
  return {
    async find(projectId: string): Promise<DigestRow | undefined> {
      const [row] = await db.select().from(digests).where(eq(digests.projectId, projectId))
      return row
    },

    /**
     * Sets the project's schedule in one INSERT … ON CONFLICT: frequency, hour and weekday as
     * sent; `enabled` as sent, or true for a new schedule and unchanged for an existing one;
     * last_period_end moved up to `sentThrough` (never back), so that a schedule set now starts
     * with its next occurrence instead of sending at once.
     */
    async set(input: { projectId: string; frequency: DigestFrequency; hour: number; weekday: number | null; enabled?: boolean | undefined; sentThrough: string; createdBy: string; now: Date }): Promise<{ row: DigestRow; created: boolean }> {
      const now = input.now.toISOString()
      const enabled = input.enabled ?? null
      const [row] = rowsOf<{ project_id: string; created: boolean }>(await db.execute(sql`
        insert into digests (project_id, frequency, hour, weekday, enabled, last_period_end, created_by, created_at, updated_at)
        values (${input.projectId}, ${input.frequency}, ${input.hour}, ${input.weekday}, coalesce(${enabled}::boolean, true), ${input.sentThrough}::date, ${input.createdBy}, ${now}::timestamptz, ${now}::timestamptz)
        on conflict (project_id) do update set
          frequency = excluded.frequency,
          hour = excluded.hour,
          weekday = excluded.weekday,
          enabled = coalesce(${enabled}::boolean, digests.enabled),
          last_period_end = greatest(digests.last_period_end, excluded.last_period_end),
          updated_at = excluded.updated_at
        returning project_id, (xmax = 0) as created`))
      const [stored] = await db.select().from(digests).where(eq(digests.projectId, row!.project_id))
      return { row: stored!, created: row!.created }
    },

    async remove(projectId: string): Promise<boolean> {
      return (await db.delete(digests).where(eq(digests.projectId, projectId)).returning({ id: digests.projectId })).length > 0
    },

    /**
     * The enabled schedules that may be due: none sent through `notBefore` yet. A due digest's
     * period ends at most on the project's yesterday, never after the UTC date of now, so the
     * caller passes that date and a schedule sent through it costs nothing more.
     */
    async candidates(notBefore: string): Promise<DigestCandidate[]> {
      const rows = await db
        .select({ digest: digests, slug: projects.slug, name: projects.name, timezone: projects.timezone })
        .from(digests)
        .innerJoin(projects, eq(projects.id, digests.projectId))
        .where(and(eq(digests.enabled, true), sql`(${digests.lastPeriodEnd} is null or ${digests.lastPeriodEnd} < ${notBefore}::date)`))
      return rows.map((r) => ({ ...r.digest, slug: r.slug, name: r.name, timezone: r.timezone }))
    },

    /**
     * Sends the period ending `periodEnd` once: in one transaction, the conditional UPDATE of
     * last_period_end (only an enabled schedule not yet sent through it) and, only when it
     * changed a row, the `digest.ready` messages. Of two instances at the same moment, the second
     * UPDATE waits for the first's commit and then matches nothing: one message. True when this
     * call sent it.
     */
    async claim(projectId: string, periodEnd: string, now: Date, data: unknown): Promise<boolean> {
      return db.transaction(async (tx) => {
        const claimed = await tx
          .update(digests)
          .set({ lastPeriodEnd: periodEnd, lastSentAt: now })
          .where(and(eq(digests.projectId, projectId), eq(digests.enabled, true), sql`(${digests.lastPeriodEnd} is null or ${digests.lastPeriodEnd} < ${periodEnd}::date)`))
          .returning({ projectId: digests.projectId })
        if (claimed.length === 0) return false
        await enqueueWebhooks(tx, projectId, 'digest.ready', now, [data])
        return true
      })
    },

    /** Per event over [from, to]: its events and the sum of its daily unique users (from the per-day counters). */
    async eventTotals(projectId: string, from: string, to: string): Promise<{ event: string; events: number; dailyUsers: number }[]> {
      const rows = rowsOf<{ event: string; events: string | number; users: string | number }>(await db.execute(sql`
        select event, sum(events) as events, sum(unique_users) as users
        from daily_event_counts
        where project_id = ${projectId} and day between ${from}::date and ${to}::date
        group by event`))
      return rows.map((r) => ({ event: r.event, events: Number(r.events), dailyUsers: Number(r.users) }))
    },

    /**
     * The opportunities of a digest, in one round trip: submitted in [start, end) and not merged
     * (the listing's), pending now (the counters), became adopted in [start, end) and still are
     * (the few adopted ones, each checked against its history), and the new ones with the most
     * reports first.
     */
    async opportunities(projectId: string, start: Date, end: Date, top: number) {
      const [s, e] = [start.toISOString(), end.toISOString()]
      const [counts] = rowsOf<{ fresh: number; pending: number; adopted: number }>(await db.execute(sql`
        select
          (select count(*)::int from opportunities
            where project_id = ${projectId} and merged_into is null and received_at >= ${s}::timestamptz and received_at < ${e}::timestamptz) as fresh,
          (select coalesce(sum(n), 0)::int from opportunity_counts where project_id = ${projectId} and status = 'pending') as pending,
          (select count(*)::int from opportunities o
            where o.project_id = ${projectId} and o.status = 'adopted' and o.merged_into is null
              and exists (select 1 from review_history h
                where h.opportunity_id = o.id and h.changed_at >= ${s}::timestamptz and h.changed_at < ${e}::timestamptz
                  and h.after ->> 'status' = 'adopted' and (h.before ->> 'status') is distinct from 'adopted')) as adopted`))
      const topNew = rowsOf<{ event_id: string; key_information: string }>(await db.execute(sql`
        select id as event_id, key_information from opportunities
        where project_id = ${projectId} and merged_into is null and received_at >= ${s}::timestamptz and received_at < ${e}::timestamptz
        order by report_count desc, received_at desc, id
        limit ${top}`))
      return { new: counts!.fresh, pending: counts!.pending, adopted: counts!.adopted, topNew }
    },

    /** The project's alert events of the days [from, to], oldest first, with each alert's name. */
    async alertEvents(projectId: string, from: string, to: string, limit: number) {
      return rowsOf<{ id: string; name: string; kind: 'triggered' | 'resolved'; day: string; value: number }>(await db.execute(sql`
        select e.alert_id as id, a.name, e.kind, to_char(e.day, 'YYYY-MM-DD') as day, e.value
        from alert_events e join alerts a on a.id = e.alert_id
        where e.project_id = ${projectId} and e.day between ${from}::date and ${to}::date
        order by e.at, e.id
        limit ${limit}`)).map((r) => ({ ...r, value: Number(r.value) }))
    },

    /** The addresses a project's digest is mailed to: its owners (members still in the workspace). */
    async ownerEmails(projectId: string): Promise<string[]> {
      const rows = rowsOf<{ email: string }>(await db.execute(sql`
        select u.email from memberships m join users u on u.id = m.user_id
        where m.project_id = ${projectId} and m.role = 'owner' and u.removed_at is null
        order by u.email`))
      return rows.map((r) => r.email)
    },
  }
}
