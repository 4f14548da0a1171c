import { and, asc, desc, eq, sql, type SQL } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { opportunities, opportunityCounts, reviewHistory, users } from '../schema.ts'
import { newId } from '../ids.ts'
import type { Evaluation, Opportunity, Status } from '../../schemas/opportunities.ts'

type Row = typeof opportunities.$inferSelect

function toOpportunity(row: Row): Opportunity {
  return {
    event_id: row.id,
    contribution_type: row.contributionType,
    key_information: row.keyInformation,
    reason: row.reason,
    suggested_action: row.suggestedAction,
    source_url: row.sourceUrl,
    external_id: row.externalId,
    received_at: row.receivedAt.toISOString(),
    evaluation: row.evaluation,
    status: row.status,
    review_note: row.reviewNote,
    review_updated_at: row.reviewUpdatedAt?.toISOString() ?? null,
  }
}

export interface ListFilters {
  type: string
  status: Status | 'all'
  evaluation: Evaluation | 'all'
  /** Only those received on this calendar day in this time zone. */
  receivedOn?: { day: string; timeZone: string }
  page: number
  pageSize: number
  /** Only those after this key in listing order (the cursor); `page` is then not used. */
  after?: ListKey
}

/** A place in listing order: received_at (ISO, microseconds, Z) and id of an opportunity. */
export interface ListKey {
  at: string
  id: string
}

export interface ReviewChange {
  evaluation?: Evaluation
  status?: Status
  reviewNote?: string
}

export function createOpportunitiesRepository(db: Queryable) {
  return {
    /** Inserts, or returns the existing opportunity with the same external_id (created: false). */
    async submit(input: {
      projectId: string
      submittedBy: string
      contributionType: string
      keyInformation: string
      reason: string
      suggestedAction: string
      sourceUrl?: string
      externalId?: string
      receivedAt: Date
    }): Promise<{ opportunity: Opportunity; created: boolean }> {
      const [inserted] = await db
        .insert(opportunities)
        .values({ id: newId('opp'), ...input })
        .onConflictDoNothing({ target: [opportunities.projectId, opportunities.externalId] })
        .returning()
      if (inserted) return { opportunity: toOpportunity(inserted), created: true }
      const [existing] = await db
        .select()
        .from(opportunities)
        .where(and(eq(opportunities.projectId, input.projectId), eq(opportunities.externalId, input.externalId!)))
      return { opportunity: toOpportunity(existing!), created: false }
    },

    /**
     * A page in listing order (received_at desc, then id), and the total. Three ways to a page:
     * after a key (the cursor: an index range from the key on, as fast at the end as at the
     * start); by page number in the first half (OFFSET from the start); by page number in the
     * second half (OFFSET from the end, read backwards, so the last pages cost what the first
     * do; only the middle of a long list costs its offset). `next` is the key of the page's last
     * item when more follow.
     */
    async list(projectId: string, f: ListFilters): Promise<{ items: Opportunity[]; total: number; next: ListKey | null }> {
      const where: (SQL | undefined)[] = [eq(opportunities.projectId, projectId)]
      if (f.type !== 'all') where.push(eq(opportunities.contributionType, f.type))
      if (f.status !== 'all') where.push(eq(opportunities.status, f.status))
      if (f.evaluation !== 'all') where.push(eq(opportunities.evaluation, f.evaluation))
      if (f.receivedOn) {
        // Local midnight to local midnight, computed by PostgreSQL, so a 23- or 25-hour day is right.
        const { day, timeZone } = f.receivedOn
        where.push(sql`${opportunities.receivedAt} >= (${day}::date::timestamp at time zone ${timeZone})`)
        where.push(sql`${opportunities.receivedAt} < ((${day}::date + 1)::timestamp at time zone ${timeZone})`)
      }

      let total: number
      if (f.receivedOn) {
        // One day of submissions: counting the index range is cheap.
        const [c] = await db.select({ n: sql<number>`count(*)::int` }).from(opportunities).where(and(...where))
        total = c!.n
      } else {
        // All dates: the trigger-maintained totals, exact without counting rows.
        const cw: (SQL | undefined)[] = [eq(opportunityCounts.projectId, projectId)]
        if (f.type !== 'all') cw.push(eq(opportunityCounts.contributionType, f.type))
        if (f.status !== 'all') cw.push(eq(opportunityCounts.status, f.status))
        if (f.evaluation !== 'all') cw.push(eq(opportunityCounts.evaluation, f.evaluation))
        const [c] = await db.select({ n: sql<number>`coalesce(sum(${opportunityCounts.n}), 0)::int` }).from(opportunityCounts).where(and(...cw))
        total = c!.n
      }

      // The exact stored time (microseconds; a JavaScript Date keeps milliseconds) for the key.
      const at = sql<string>`to_char(${opportunities.receivedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
      const select = () => db.select({ row: opportunities, at }).from(opportunities)
      const size = f.pageSize
      let rows: { row: Row; at: string }[]
      let more: boolean
      if (f.after) {
        const key = sql`${f.after.at}::timestamptz`
        where.push(sql`${opportunities.receivedAt} <= ${key}`, sql`(${opportunities.receivedAt} < ${key} or ${opportunities.id} > ${f.after.id})`)
        rows = await select().where(and(...where)).orderBy(desc(opportunities.receivedAt), asc(opportunities.id)).limit(size + 1)
        more = rows.length > size
      } else {
        const offset = (f.page - 1) * size
        if (offset >= total && offset > 0) {
          rows = []
          more = false
        } else if (offset > 0 && 2 * offset + size > total) {
          // Nearer the end: the rows after this page are skipped from the end, in reverse order.
          const after = total - offset - size
          rows = (
            await select()
              .where(and(...where))
              .orderBy(asc(opportunities.receivedAt), desc(opportunities.id))
              .limit(size + Math.min(0, after))
              .offset(Math.max(0, after))
          ).reverse()
          more = after > 0
        } else {
          rows = await select().where(and(...where)).orderBy(desc(opportunities.receivedAt), asc(opportunities.id)).limit(size + 1).offset(offset)
          more = rows.length > size
        }
      }
      const page = rows.slice(0, size)
      const last = page.at(-1)
      return { items: page.map((r) => toOpportunity(r.row)), total, next: more && last ? { at: last.at, id: last.row.id } : null }
    },

    /**
     * Changes only the sent review fields in one UPDATE and appends the change to the history,
     * in one transaction; the row lock orders concurrent reviews of the same opportunity.
     */
    /** The reviewed opportunity, or undefined when the project has no such opportunity. */
    async review(projectId: string, id: string, change: ReviewChange, actorUserId: string, now: Date): Promise<Opportunity | undefined> {
      return db.transaction(async (tx) => {
        const [before] = await tx
          .select({ evaluation: opportunities.evaluation, status: opportunities.status, reviewNote: opportunities.reviewNote })
          .from(opportunities)
          .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
          .for('update')
        if (!before) return undefined
        const [after] = await tx
          .update(opportunities)
          .set({ ...change, reviewUpdatedAt: now })
          .where(eq(opportunities.id, id))
          .returning()
        const pick = (s: { evaluation: string; status: string; reviewNote: string }) => ({
          ...(change.evaluation !== undefined ? { evaluation: s.evaluation } : {}),
          ...(change.status !== undefined ? { status: s.status } : {}),
          ...(change.reviewNote !== undefined ? { review_note: s.reviewNote } : {}),
        })
        await tx.insert(reviewHistory).values({ opportunityId: id, actorUserId, changedAt: now, before: pick(before), after: pick(after!) })
        return toOpportunity(after!)
      })
    },

    async exists(projectId: string, id: string): Promise<boolean> {
      const [row] = await db
        .select({ id: opportunities.id })
        .from(opportunities)
        .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
      return Boolean(row)
    },

    async history(id: string) {
      return db
        .select({ changedAt: reviewHistory.changedAt, before: reviewHistory.before, after: reviewHistory.after, actorId: users.id, actorEmail: users.email })
        .from(reviewHistory)
        .leftJoin(users, eq(users.id, reviewHistory.actorUserId))
        .where(eq(reviewHistory.opportunityId, id))
        .orderBy(asc(reviewHistory.id))
    },

    /** Totals by status and by evaluation, from the maintained counters. */
    async totals(projectId: string) {
      return db
        .select({ status: opportunityCounts.status, evaluation: opportunityCounts.evaluation, n: opportunityCounts.n })
        .from(opportunityCounts)
        .where(eq(opportunityCounts.projectId, projectId))
    },
  }
}
