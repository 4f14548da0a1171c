// Who an opportunity is given to (issue 28): a member of its project, or no one. A change is one
// transaction: the version bump and the new assignee in one UPDATE, the history entry (action
// 'assign', before/after {assignee: email | null}) and the opportunity.assigned messages. A
// member's assignments in a project end with their membership there (db/repositories/members.ts:
// `clearAssignments`, in the removal's own transaction).
import { and, eq, isNull, sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import { opportunities, reviewHistory } from '../schema.ts'
import { enqueueWebhooks } from './webhooks.ts'
import { fullRow, nextVersion, toOpportunity } from './opportunities.ts'
import type { Opportunity } from '../../schemas/opportunities.ts'

export type AssignOutcome =
  | { kind: 'assigned'; opportunity: Opportunity; changed: boolean }
  | { kind: 'missing' }
  | { kind: 'moved'; version: number }
  | { kind: 'merged'; into: string }
  | { kind: 'not_member' }

/** The data of an opportunity.assigned message: the opportunity, and the assignment (its history entry, who, before → after). */
export function assignedData(opportunity: Opportunity, historyId: number, actorUserId: string | null, before: string | null, after: string | null) {
  return { ...opportunity, assignment: { history_id: historyId, actor: actorUserId === null ? null : { id: actorUserId }, before: { assignee: before }, after: { assignee: after } } }
}

/**
 * Clears every assignment of `userId` in these projects (all of them: null) in the statements
 * of `tx`, the caller's transaction: each such opportunity gets one more version, a history
 * entry (by `actorUserId`) and an opportunity.assigned message. Resolves to how many.
 */
export async function clearAssignments(tx: Queryable, input: { userId: string; projectIds: string[] | null; actorUserId: string | null; now: Date }): Promise<number> {
  if (input.projectIds !== null && input.projectIds.length === 0) return 0
  const inProjects = input.projectIds === null ? sql`true` : sql`o.project_id in (select x from json_array_elements_text(${JSON.stringify(input.projectIds)}::json) as x)`
  const [user] = rowsOf<{ email: string }>(await tx.execute(sql`select email from users where id = ${input.userId}`))
  const cleared = rowsOf<{ id: string; project_id: string }>(await tx.execute(sql`
    with mine as (select o.id from opportunities o where o.assignee_user_id = ${input.userId} and ${inProjects} order by o.id for update)
    update opportunities o set assignee_user_id = null, version = o.version + 1 from mine where o.id = mine.id
    returning o.id, o.project_id`))
  if (cleared.length === 0) return 0
  const ids = cleared.map((r) => r.id)
  const entries = await tx
    .insert(reviewHistory)
    .values(ids.map((id) => ({ opportunityId: id, actorUserId: input.actorUserId, changedAt: input.now, action: 'assign', before: { assignee: user?.email ?? null }, after: { assignee: null } })))
    .returning({ id: reviewHistory.id, opportunityId: reviewHistory.opportunityId })
  const entryOf = new Map(entries.map((e) => [e.opportunityId, e.id]))
  const rows = await tx.select(fullRow).from(opportunities).where(sql`${opportunities.id} in (select x from json_array_elements_text(${JSON.stringify(ids)}::json) as x)`).orderBy(opportunities.id)
  const byProject = new Map<string, ReturnType<typeof assignedData>[]>()
  for (const row of rows) {
    const list = byProject.get(row.projectId) ?? []
    list.push(assignedData(toOpportunity(row), entryOf.get(row.id)!, input.actorUserId, user?.email ?? null, null))
    byProject.set(row.projectId, list)
  }
  for (const [projectId, data] of byProject) await enqueueWebhooks(tx, projectId, 'opportunity.assigned', input.now, data)
  return cleared.length
}

export function createAssigneesRepository(db: Queryable) {
  return {
    /** The member of the project with this user id or email (any case), or undefined. */
    async member(projectId: string, who: string): Promise<{ id: string; email: string } | undefined> {
      const [row] = rowsOf<{ id: string; email: string }>(await db.execute(sql`
        select u.id, u.email from users u join memberships m on m.user_id = u.id and m.project_id = ${projectId}
        where (u.id = ${who} or u.email = lower(${who})) and u.removed_at is null`))
      return row
    },

    /**
     * Gives the opportunity to the member `userId` (null: to no one). The membership is locked
     * (FOR SHARE) in the transaction, so a removal from the project waits for it and then clears
     * this assignment too; the opportunity is locked, and the UPDATE holds the preconditions
     * (`ifVersion`, not merged) and sets only a different assignee: no row changed is told apart
     * by the locked row (missing, merged, moved, or already so: `changed: false`, nothing written).
     */
    async assign(projectId: string, id: string, userId: string | null, actorUserId: string, now: Date, ifVersion?: number): Promise<AssignOutcome> {
      return db.transaction(async (tx) => {
        if (userId !== null) {
          const member = rowsOf(await tx.execute(sql`
            select 1 from memberships m join users u on u.id = m.user_id
            where m.user_id = ${userId} and m.project_id = ${projectId} and u.removed_at is null for share of m`))
          if (member.length === 0) return { kind: 'not_member' }
        }
        // The whole row, as the answer of a call that changes nothing is this one.
        const [locked] = await tx
          .select(fullRow)
          .from(opportunities)
          .where(and(eq(opportunities.id, id), eq(opportunities.projectId, projectId)))
          .for('update')
        if (!locked) return { kind: 'missing' }
        const [after] = await tx
          .update(opportunities)
          .set({ assigneeUserId: userId, ...nextVersion })
          .where(and(
            eq(opportunities.id, id),
            isNull(opportunities.mergedInto),
            ifVersion !== undefined ? eq(opportunities.version, ifVersion) : undefined,
            sql`${opportunities.assigneeUserId} is distinct from ${userId}`
          ))
          .returning(fullRow)
        if (!after) {
          if (locked.mergedInto !== null) return { kind: 'merged', into: locked.mergedInto }
          if (ifVersion !== undefined && locked.version !== ifVersion) return { kind: 'moved', version: locked.version }
          return { kind: 'assigned', opportunity: toOpportunity(locked), changed: false }
        }
        const before = locked.assigneeUserId === null ? null : locked.assigneeEmail
        const [entry] = await tx
          .insert(reviewHistory)
          .values({ opportunityId: id, actorUserId, changedAt: now, action: 'assign', before: { assignee: before }, after: { assignee: after.assigneeEmail } })
          .returning({ id: reviewHistory.id })
        const opportunity = toOpportunity(after)
        await enqueueWebhooks(tx, projectId, 'opportunity.assigned', now, [assignedData(opportunity, entry!.id, actorUserId, before, after.assigneeEmail)])
        return { kind: 'assigned', opportunity, changed: true }
      })
    },
  }
}
