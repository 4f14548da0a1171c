import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { EventId } from '../schemas/opportunities.ts'
import { Comment, CommentBody, CommentId } from '../schemas/comments.ts'
import { addRefusal, requireText } from './comment-refusals.ts'

export default defineOperation({
  name: 'add_comment',
  title: 'Comment on an opportunity',
  description:
    'Opportunity comments: add a comment (`body`, 1–4000 characters, kept as sent) to a growth opportunity\'s thread, ' +
    'or with `parent_id` a reply to a comment of that opportunity (threads are one level deep: a reply to a reply ' +
    'answers its top-level comment). Goes in its review history; not on a merged opportunity. Needs review access.',
  scope: 'project',
  role: 'reviewer',
  toolset: 'triage',
  input: Type.Object({ event_id: EventId, body: CommentBody, parent_id: Type.Optional(CommentId) }, { additionalProperties: false }),
  output: Comment,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      { title: 'A comment on an opportunity', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', body: 'Their CTO replied: they want a demo next week.' } },
      { title: 'A reply to a comment', args: { event_id: 'opp_7Hd3Qw9Zx2Lm5Nc8Vb1k', parent_id: 'cmt_4Rf8Tg2Yh6Uj1Ik9Ol3p', body: 'I can take the demo on Tuesday.' } },
    ],
    invalid: [
      { title: 'No text', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', body: '' }, field: 'body' },
      { title: 'Only white space', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', body: ' \n\t ' }, field: 'body' },
      { title: 'More than 4000 characters', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', body: 'x'.repeat(4001) }, field: 'body' },
      { title: 'A parent that is not a comment id', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', parent_id: 'opp_7Hd3Qw9Zx2Lm5Nc8Vb1k', body: 'Agreed.' }, field: 'parent_id' },
      { title: 'No opportunity', args: { body: 'Agreed.' }, field: 'event_id' },
    ],
  },
  async handler(args, ctx) {
    requireText(args.body)
    const outcome = await ctx.repos.comments.add({
      projectId: ctx.project.id,
      eventId: args.event_id,
      parentId: args.parent_id,
      body: args.body,
      authorUserId: ctx.principal.userId,
      now: ctx.now(),
    })
    if (outcome.kind !== 'added') throw addRefusal(outcome, args, ctx)
    return outcome.comment
  },
})
