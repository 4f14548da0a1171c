import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Comment, CommentBody, CommentId } from '../schemas/comments.ts'
import { changeRefusal, requireText } from './comment-refusals.ts'

export default defineOperation({
  name: 'edit_comment',
  title: 'Edit a comment',
  description:
    'Opportunity comments: replace the text of your own comment (`body`, 1–4000 characters); `edited_at` shows it ' +
    'was edited. Only its author edits a comment (else forbidden); not a deleted one, not on a merged opportunity.',
  scope: 'project',
  role: 'reviewer',
  toolset: 'triage',
  input: Type.Object({ comment_id: CommentId, body: CommentBody }, { additionalProperties: false }),
  output: Comment,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Correct a comment', args: { comment_id: 'cmt_9Kd2Lf7Hs4Pq1Wz6Xc3v', body: 'Their CTO replied: they want a demo on Thursday, not Tuesday.' } }],
    invalid: [
      { title: 'No new text', args: { comment_id: 'cmt_9Kd2Lf7Hs4Pq1Wz6Xc3v' }, field: 'body' },
      { title: 'More than 4000 characters', args: { comment_id: 'cmt_9Kd2Lf7Hs4Pq1Wz6Xc3v', body: 'x'.repeat(4001) }, field: 'body' },
      { title: 'An opportunity id instead of a comment id', args: { comment_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', body: 'Fixed.' }, field: 'comment_id' },
    ],
  },
  async handler(args, ctx) {
    requireText(args.body)
    const outcome = await ctx.repos.comments.edit({ projectId: ctx.project.id, commentId: args.comment_id, userId: ctx.principal.userId, body: args.body, now: ctx.now() })
    if (outcome.kind !== 'changed') throw changeRefusal(outcome, args.comment_id, 'edit', ctx)
    return outcome.comment
  },
})
