// Comments on an opportunity (threads one level deep). Every write takes a share lock on the
// opportunity (a merge, which updates it, waits for the comment or the comment for the merge),
// refuses a merged one, and writes its review_history entry (action 'comment') and its webhook
// message in the same transaction. A comment does not change the opportunity's version.
import { and, asc, eq, isNull, sql } from '../orm.ts'
import type { Queryable } from '../client.ts'
import { comments, opportunities, reviewHistory, users } from '../schema.ts'
import { newId } from '../ids.ts'
import { enqueueWebhooks } from './webhooks.ts'
import type { Comment } from '../../schemas/comments.ts'

const columns = {
  id: comments.id,
  opportunityId: comments.opportunityId,
  parentId: comments.parentId,
  authorId: comments.authorUserId,
  authorEmail: users.email,
  body: comments.body,
  createdAt: comments.createdAt,
  editedAt: comments.editedAt,
  deletedAt: comments.deletedAt,
}
type Row = { id: string; opportunityId: string; parentId: string | null; authorId: string | null; authorEmail: string | null; body: string; createdAt: Date; editedAt: Date | null; deletedAt: Date | null }

function toComment(row: Row): Comment {
  return {
    comment_id: row.id,
    event_id: row.opportunityId,
    parent_id: row.parentId,
    author: row.authorId !== null && row.authorEmail !== null ? { id: row.authorId, email: row.authorEmail } : null,
    body: row.deletedAt ? '' : row.body,
    created_at: row.createdAt.toISOString(),
    edited_at: row.editedAt?.toISOString() ?? null,
    deleted: row.deletedAt !== null,
  }
}

/** Why a write changed nothing: no such opportunity or comment in the project, or the opportunity is merged (`into`: where). */
type Refusal = { kind: 'missing' } | { kind: 'merged'; eventId: string; into: string }
export type AddOutcome = { kind: 'added'; comment: Comment } | Refusal | { kind: 'parent_missing' } | { kind: 'parent_elsewhere' } | { kind: 'parent_deleted' }
/** `forbidden`: someone else's (and, for a deletion, the caller is not an owner); `deleted`: deleted already. */
export type ChangeOutcome = { kind: 'changed'; comment: Comment } | Refusal | { kind: 'forbidden' } | { kind: 'deleted' }

/** A top-level comment that was deleted stays in the thread (as deleted) while it has a reply that was not; a deleted reply leaves it. */
const shown = sql`(${comments.deletedAt} is null or (${comments.parentId} is null and exists (select 1 from comments r where r.parent_id = ${comments.id} and r.deleted_at is null)))`
/** The top-level comment of each comment's thread (itself, or its parent): its time and id order the threads. */
const rootCreatedAt = sql`coalesce((select p.created_at from comments p where p.id = ${comments.parentId}), ${comments.createdAt})`
const rootId = sql`coalesce(${comments.parentId}, ${comments.id})`

export function createCommentsRepository(db: Queryable) {
  async function byId(id: string, q: Queryable): Promise<Comment> {
    const [row] = await q.select(columns).from(comments).leftJoin(users, eq(users.id, comments.authorUserId)).where(eq(comments.id, id))
    return toComment(row!)
  }

  /** The opportunity of the project, share-locked until the transaction ends; a refusal when missing or merged. */
  async function lockOpportunity(tx: Queryable, projectId: string, eventId: string): Promise<Refusal | null> {
    const [opp] = await tx
      .select({ mergedInto: opportunities.mergedInto })
      .from(opportunities)
      .where(and(eq(opportunities.id, eventId), eq(opportunities.projectId, projectId)))
      .for('share')
    if (!opp) return { kind: 'missing' }
    if (opp.mergedInto !== null) return { kind: 'merged', eventId, into: opp.mergedInto }
    return null
  }

  async function record(tx: Queryable, eventId: string, actorUserId: string, now: Date, before: Record<string, unknown>, after: Record<string, unknown>) {
    await tx.insert(reviewHistory).values({ opportunityId: eventId, actorUserId, changedAt: now, action: 'comment', before, after })
  }

  /**
   * Edits or deletes a comment in one conditional UPDATE (its id, the project, not deleted, and
   * — unless `anyAuthor` — the caller's own); when it changes nothing, the comment read in the
   * same transaction says why.
   */
  async function change(
    input: { projectId: string; commentId: string; userId: string; now: Date; anyAuthor?: boolean },
    set: Partial<typeof comments.$inferInsert>,
    history: (before: Row) => { before: Record<string, unknown>; after: Record<string, unknown> },
    event: 'comment.edited' | 'comment.deleted'
  ): Promise<ChangeOutcome> {
    return db.transaction(async (tx) => {
      const [found] = await tx
        .select({ opportunityId: comments.opportunityId })
        .from(comments)
        .where(and(eq(comments.id, input.commentId), eq(comments.projectId, input.projectId)))
      if (!found) return { kind: 'missing' }
      const refused = await lockOpportunity(tx, input.projectId, found.opportunityId)
      if (refused) return refused
      // The row as it was (the UPDATE below locks it; this read only feeds the history entry).
      const [before] = await tx.select(columns).from(comments).leftJoin(users, eq(users.id, comments.authorUserId)).where(eq(comments.id, input.commentId)).for('update', { of: comments })
      const [updated] = await tx
        .update(comments)
        .set(set)
        .where(and(
          eq(comments.id, input.commentId),
          eq(comments.projectId, input.projectId),
          isNull(comments.deletedAt),
          input.anyAuthor ? undefined : eq(comments.authorUserId, input.userId)
        ))
        .returning({ id: comments.id })
      if (!updated) {
        if (!before) return { kind: 'missing' }
        return before.deletedAt !== null ? { kind: 'deleted' } : { kind: 'forbidden' }
      }
      const { before: b, after: a } = history(before!)
      await record(tx, found.opportunityId, input.userId, input.now, b, a)
      const comment = await byId(input.commentId, tx)
      await enqueueWebhooks(tx, input.projectId, event, input.now, [comment])
      return { kind: 'changed', comment }
    })
  }

  return {
    /** The thread of an opportunity of the project in thread order (see CommentThread); null when there is no such opportunity. */
    async thread(projectId: string, eventId: string): Promise<Comment[] | null> {
      return db.transaction(async (tx) => {
        const [opp] = await tx.select({ id: opportunities.id }).from(opportunities).where(and(eq(opportunities.id, eventId), eq(opportunities.projectId, projectId)))
        if (!opp) return null
        const rows = await tx
          .select(columns)
          .from(comments)
          .leftJoin(users, eq(users.id, comments.authorUserId))
          .where(and(eq(comments.opportunityId, eventId), eq(comments.projectId, projectId), shown))
          .orderBy(asc(rootCreatedAt), asc(rootId), sql`${comments.parentId} is not null`, asc(comments.createdAt), asc(comments.id))
        return rows.map(toComment)
      })
    },

    /**
     * A comment by `authorUserId` on an opportunity of the project; with `parentId`, a reply to
     * that comment of the same opportunity — to its top-level comment when it is itself a reply
     * (threads are one level deep).
     */
    async add(input: { projectId: string; eventId: string; parentId?: string; body: string; authorUserId: string; now: Date }): Promise<AddOutcome> {
      return db.transaction(async (tx) => {
        const refused = await lockOpportunity(tx, input.projectId, input.eventId)
        if (refused) return refused
        let parentId: string | null = null
        if (input.parentId !== undefined) {
          // Share-locked: a deletion of the parent waits for this reply (and then keeps the parent shown).
          const [parent] = await tx
            .select({ opportunityId: comments.opportunityId, parentId: comments.parentId, deletedAt: comments.deletedAt })
            .from(comments)
            .where(and(eq(comments.id, input.parentId), eq(comments.projectId, input.projectId)))
            .for('share')
          if (!parent) return { kind: 'parent_missing' }
          if (parent.opportunityId !== input.eventId) return { kind: 'parent_elsewhere' }
          if (parent.deletedAt !== null) return { kind: 'parent_deleted' }
          parentId = parent.parentId ?? input.parentId
        }
        const id = newId('cmt')
        await tx.insert(comments).values({
          id,
          projectId: input.projectId,
          opportunityId: input.eventId,
          parentId,
          authorUserId: input.authorUserId,
          body: input.body,
          createdAt: input.now,
        })
        await record(tx, input.eventId, input.authorUserId, input.now, { comment_id: null, parent_id: null }, { comment_id: id, parent_id: parentId })
        const comment = await byId(id, tx)
        await enqueueWebhooks(tx, input.projectId, 'comment.created', input.now, [comment])
        return { kind: 'added', comment }
      })
    },

    /** Its author replaces the text (and edited_at is set). */
    async edit(input: { projectId: string; commentId: string; userId: string; body: string; now: Date }): Promise<ChangeOutcome> {
      return change(input, { body: input.body, editedAt: input.now }, (before) => ({
        before: { comment_id: input.commentId, edited_at: before.editedAt?.toISOString() ?? null },
        after: { comment_id: input.commentId, edited_at: input.now.toISOString() },
      }), 'comment.edited')
    },

    /** Its author (or, with `anyAuthor`, a project owner) deletes it: its text is erased, its place kept while it has replies. */
    async remove(input: { projectId: string; commentId: string; userId: string; anyAuthor: boolean; now: Date }): Promise<ChangeOutcome> {
      return change(input, { body: '', deletedAt: input.now }, () => ({
        before: { comment_id: input.commentId, deleted: false },
        after: { comment_id: input.commentId, deleted: true },
      }), 'comment.deleted')
    },
  }
}
