// Merging opportunities into one, and taking one back out, losslessly (issue 28): a merge never
// rewrites a source's own fields (nor its version), it only sets merged_into / merged_at /
// merged_by, so an unmerge that clears them restores the source exactly as it was. The target
// counts the reports (report_count) and gets a new version. Merges are one level deep: a source
// must not have sources of its own, and an opportunity that is merged is no target.
import { and, asc, eq, inArray, isNull, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { opportunities, reviewHistory } from '../schema.ts'
import { enqueueWebhooks } from './webhooks.ts'
import { fullRow, nextVersion, toOpportunity } from './opportunities.ts'
import type { Opportunity } from '../../schemas/opportunities.ts'

/** What a merge did, or why it did nothing (every refusal is decided before any write). */
export type MergeOutcome =
  | { kind: 'merged'; target: Opportunity; sources: Opportunity[] }
  /** Ids (the target's or sources') that are not opportunities of the project. */
  | { kind: 'missing'; missing: string[] }
  /** Ids already merged into another (the target, or sources), with where. */
  | { kind: 'already_merged'; merged: { id: string; into: string }[] }
  /** Sources that are themselves targets of earlier merges, with how many they hold. */
  | { kind: 'has_sources'; targets: { id: string; sources: number }[] }
  /** The target is not at the precondition's version (`version`: its current one). */
  | { kind: 'moved'; version: number }

export type UnmergeOutcome =
  | { kind: 'unmerged'; source: Opportunity; target: Opportunity }
  | { kind: 'missing' }
  | { kind: 'not_merged' }

/** The part of an opportunity a merge or an unmerge reads under the row lock. */
const lockedFields = { id: opportunities.id, mergedInto: opportunities.mergedInto, reportCount: opportunities.reportCount, version: opportunities.version }

/** Merge order: when merged, then in the order of the merge's source list (its 'merged' history entries). */
const mergeOrder = sql`(select max(h.id) from review_history h where h.opportunity_id = ${opportunities.id} and h.action = 'merged')`

export function createMergesRepository(db: Queryable) {
  return {
    /**
     * Merges `sourceIds` into `targetId`, all or nothing, in one transaction: the target and the
     * sources are locked in id order (two merges, or a merge and an unmerge, cannot deadlock),
     * and every refusal is decided on the locked rows. The target's UPDATE adds the sources'
     * report counts and bumps its version (with `ifVersion`, only while it is at that version);
     * the sources' UPDATE sets only merged_into / merged_at / merged_by. Each gets its history
     * entry, and one opportunity.merged message goes out.
     */
    async merge(projectId: string, targetId: string, sourceIds: string[], actorUserId: string, now: Date, ifVersion?: number): Promise<MergeOutcome> {
      return db.transaction(async (tx) => {
        const ids = [targetId, ...sourceIds]
        const locked = await tx
          .select(lockedFields)
          .from(opportunities)
          .where(and(eq(opportunities.projectId, projectId), inArray(opportunities.id, ids)))
          .orderBy(asc(opportunities.id))
          .for('update')
        const byId = new Map(locked.map((r) => [r.id, r]))
        const missing = ids.filter((id) => !byId.has(id))
        if (missing.length > 0) return { kind: 'missing', missing }
        const merged = ids.flatMap((id) => {
          const into = byId.get(id)!.mergedInto
          return into !== null ? [{ id, into }] : []
        })
        if (merged.length > 0) return { kind: 'already_merged', merged }
        // Read after the locks: a merge into one of them that committed meanwhile is seen here.
        const held = await tx
          .select({ id: opportunities.mergedInto, n: sql<number>`count(*)::int` })
          .from(opportunities)
          .where(inArray(opportunities.mergedInto, sourceIds))
          .groupBy(opportunities.mergedInto)
        if (held.length > 0) {
          const count = new Map(held.map((h) => [h.id!, h.n]))
          return { kind: 'has_sources', targets: sourceIds.filter((id) => count.has(id)).map((id) => ({ id, sources: count.get(id)! })) }
        }
        const before = byId.get(targetId)!
        const [target] = await tx
          .update(opportunities)
          .set({
            reportCount: sql`${opportunities.reportCount} + (select sum(s.report_count)::int from opportunities s where s.project_id = ${projectId} and s.id in ${sourceIds})`,
            ...nextVersion,
          })
          .where(and(eq(opportunities.id, targetId), isNull(opportunities.mergedInto), ifVersion !== undefined ? eq(opportunities.version, ifVersion) : undefined))
          .returning(fullRow)
        if (!target) return { kind: 'moved', version: before.version }
        const sources = await tx
          .update(opportunities)
          .set({ mergedInto: targetId, mergedAt: now, mergedBy: actorUserId })
          .where(and(eq(opportunities.projectId, projectId), inArray(opportunities.id, sourceIds), isNull(opportunities.mergedInto)))
          .returning(fullRow)
        const sourceOf = new Map(sources.map((r) => [r.id, toOpportunity(r)]))
        const [entry] = await tx
          .insert(reviewHistory)
          .values({
            opportunityId: targetId,
            actorUserId,
            changedAt: now,
            action: 'merge',
            before: { report_count: before.reportCount },
            after: { report_count: target.reportCount, merged: sourceIds },
          })
          .returning({ id: reviewHistory.id })
        // One by one, in the order of the list: the order list_merged_opportunities answers in.
        await tx.insert(reviewHistory).values(
          sourceIds.map((id) => ({ opportunityId: id, actorUserId, changedAt: now, action: 'merged', before: { merged_into: null }, after: { merged_into: targetId } }))
        )
        const opportunity = toOpportunity(target)
        await enqueueWebhooks(tx, projectId, 'opportunity.merged', now, [
          { ...opportunity, merge: { history_id: entry!.id, actor: { id: actorUserId }, sources: sourceIds } },
        ])
        return { kind: 'merged', target: opportunity, sources: sourceIds.map((id) => sourceOf.get(id)!) }
      })
    },

    /**
     * Takes a merged opportunity back out of its target, in one transaction: both are locked in
     * id order, the source's merge fields are cleared (nothing else of it changes, its version
     * neither: it is again exactly as before its merge), the target's report_count loses the
     * source's and its version is bumped; both get their history entry, and one
     * opportunity.unmerged message goes out.
     */
    async unmerge(projectId: string, sourceId: string, actorUserId: string, now: Date): Promise<UnmergeOutcome> {
      return db.transaction(async (tx) => {
        const lock = (ids: string[]) =>
          tx.select(lockedFields).from(opportunities).where(and(eq(opportunities.projectId, projectId), inArray(opportunities.id, ids))).orderBy(asc(opportunities.id)).for('update')
        // The source and the target it is merged into, locked in id order.
        const into = sql`(select o.merged_into from opportunities o where o.id = ${sourceId} and o.project_id = ${projectId})`
        let locked = await tx
          .select(lockedFields)
          .from(opportunities)
          .where(and(eq(opportunities.projectId, projectId), sql`${opportunities.id} in (${sourceId}, ${into})`))
          .orderBy(asc(opportunities.id))
          .for('update')
        const source = locked.find((r) => r.id === sourceId)
        if (!source) return { kind: 'missing' }
        if (source.mergedInto === null) return { kind: 'not_merged' }
        // Unmerged and merged elsewhere between the read of `into` and the lock: lock that target too.
        if (!locked.some((r) => r.id === source.mergedInto)) locked = await lock([source.mergedInto])
        const targetId = source.mergedInto
        const before = locked.find((r) => r.id === targetId)!
        const [restored] = await tx
          .update(opportunities)
          .set({ mergedInto: null, mergedAt: null, mergedBy: null })
          .where(eq(opportunities.id, sourceId))
          .returning(fullRow)
        const [target] = await tx
          .update(opportunities)
          .set({ reportCount: sql`${opportunities.reportCount} - ${source.reportCount}`, ...nextVersion })
          .where(eq(opportunities.id, targetId))
          .returning(fullRow)
        await tx.insert(reviewHistory).values({
          opportunityId: targetId,
          actorUserId,
          changedAt: now,
          action: 'unmerge',
          before: { report_count: before.reportCount },
          after: { report_count: target!.reportCount, unmerged: [sourceId] },
        })
        const [entry] = await tx
          .insert(reviewHistory)
          .values({ opportunityId: sourceId, actorUserId, changedAt: now, action: 'unmerged', before: { merged_into: targetId }, after: { merged_into: null } })
          .returning({ id: reviewHistory.id })
        const opportunity = toOpportunity(restored!)
        await enqueueWebhooks(tx, projectId, 'opportunity.unmerged', now, [
          { ...opportunity, unmerge: { history_id: entry!.id, actor: { id: actorUserId }, target: targetId } },
        ])
        return { kind: 'unmerged', source: opportunity, target: toOpportunity(target!) }
      })
    },

    /** The opportunities merged into `targetId`, in merge order; null when it is no opportunity of the project. */
    async sources(projectId: string, targetId: string): Promise<Opportunity[] | null> {
      const [target] = await db.select({ id: opportunities.id }).from(opportunities).where(and(eq(opportunities.id, targetId), eq(opportunities.projectId, projectId)))
      if (!target) return null
      const rows = await db
        .select(fullRow)
        .from(opportunities)
        .where(and(eq(opportunities.projectId, projectId), eq(opportunities.mergedInto, targetId)))
        .orderBy(asc(opportunities.mergedAt), asc(mergeOrder), asc(opportunities.id))
      return rows.map(toOpportunity)
    },
  }
}
