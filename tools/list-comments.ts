import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId } from '../schemas/opportunities.ts'
import { CommentThread } from '../schemas/comments.ts'

export default defineOperation({
  name: 'list_comments',
  title: 'Comments of an opportunity',
  description:
    'Opportunity comments: the thread of a growth opportunity, in reading order — each top-level comment, oldest ' +
    'first, followed by its replies (`parent_id`), oldest first; each with author, times and `deleted` (a deleted ' +
    'comment keeps its place, without text, only while it has replies).',
  scope: 'project',
  role: 'viewer',
  toolset: 'triage',
  input: Type.Object({ event_id: EventId }, { additionalProperties: false }),
  output: CommentThread,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'Read the discussion of an opportunity', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' } }],
    invalid: [
      { title: 'No opportunity', args: {}, field: 'event_id' },
      { title: 'A comment id instead of an opportunity id', args: { event_id: 'cmt_8Wq2Er4Ty6Ui8Op0As2d' }, field: 'event_id' },
    ],
  },
  async handler(args, ctx) {
    const items = await ctx.repos.comments.thread(ctx.project.id, args.event_id)
    if (!items) throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
    return { event_id: args.event_id, items }
  },
})
