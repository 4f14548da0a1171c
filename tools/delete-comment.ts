import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Comment, CommentId } from '../schemas/comments.ts'
import { changeRefusal } from './comment-refusals.ts'

export default defineOperation({
  name: 'delete_comment',
  title: 'Delete a comment',
  description:
    'Opportunity comments: delete your own comment (a project owner may delete anyone\'s). Its text is erased; it ' +
    'keeps its place in the thread, marked deleted, while it has replies, else it leaves the thread. Returns it as deleted.',
  scope: 'project',
  role: 'reviewer',
  toolset: 'triage',
  input: Type.Object({ comment_id: CommentId }, { additionalProperties: false }),
  output: Comment,
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  examples: {
    valid: [{ title: 'Delete a comment made by mistake', args: { comment_id: 'cmt_3Mn8Bv5Cx1Za7Sd2Fg6h' } }],
    invalid: [
      { title: 'No comment', args: {}, field: 'comment_id' },
      { title: 'Not a comment id', args: { comment_id: 'comment-12' }, field: 'comment_id' },
      { title: 'A reason: it is not kept', args: { comment_id: 'cmt_3Mn8Bv5Cx1Za7Sd2Fg6h', reason: 'typo' }, field: 'reason' },
    ],
  },
  async handler(args, ctx) {
    const outcome = await ctx.repos.comments.remove({
      projectId: ctx.project.id,
      commentId: args.comment_id,
      userId: ctx.principal.userId,
      anyAuthor: ctx.project.role === 'owner',
      now: ctx.now(),
    })
    if (outcome.kind !== 'changed') throw changeRefusal(outcome, args.comment_id, 'delete', ctx)
    return outcome.comment
  },
})
