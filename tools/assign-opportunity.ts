import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, IfVersion, Member, Version } from '../schemas/opportunities.ts'
import { versionConflict } from './review-opportunity.ts'
import { mergedConflict } from './triage-args.ts'

export default defineOperation({
  name: 'assign_opportunity',
  title: 'Assign a growth opportunity',
  description:
    'Opportunity assignee: give a growth opportunity to a member of the project (`assignee`: their email, user id or ' +
    '`me`), or to no one (null). The change joins its history. With `if_version` it changes only if no one changed it ' +
    'since (else a `conflict`). A merged opportunity is refused. Needs review access.',
  toolset: 'triage',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({
    event_id: EventId,
    assignee: Type.Union([Type.String({ minLength: 1, maxLength: 254 }), Type.Null()], { description: 'A member\'s email or user id, `me`, or null for no one.' }),
    if_version: Type.Optional(IfVersion),
  }, { additionalProperties: false }),
  output: Type.Object({
    event_id: Type.String(),
    assignee: Type.Union([Member, Type.Null()]),
    version: Version,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Give an opportunity to a member by email', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', assignee: 'dana@example.com' } },
      { title: 'Take it yourself, only if it is still at version 1', args: { event_id: 'opp_7Hc3Rw9Tz1Qm5Vb8Np2k', assignee: 'me', if_version: 1 } },
      { title: 'Give it to no one', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', assignee: null } },
    ],
    invalid: [
      { title: 'No assignee (null gives it to no one)', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: 'assignee' },
      { title: 'An empty assignee', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', assignee: '' }, field: 'assignee' },
      { title: 'A version as a string', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', assignee: null, if_version: '2' }, field: 'if_version' },
    ],
  },
  async handler(args, ctx) {
    let userId: string | null = null
    if (args.assignee !== null) {
      const who = args.assignee.trim()
      const member = who === 'me' ? { id: ctx.principal.userId } : await ctx.repos.assignees.member(ctx.project.id, who)
      if (!member) {
        throw appError('InvalidArguments', `'${who}' is not a member of project '${ctx.project.slug}': an opportunity goes to one of its members (list_members).`, [
          { path: 'assignee', message: 'is not a member of this project' },
        ])
      }
      userId = member.id
    }
    const outcome = await ctx.repos.assignees.assign(ctx.project.id, args.event_id, userId, ctx.principal.userId, ctx.now(), args.if_version)
    if (outcome.kind === 'missing') throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
    if (outcome.kind === 'moved') throw versionConflict(args.event_id, args.if_version!, outcome.version)
    if (outcome.kind === 'merged') throw mergedConflict(args.event_id, outcome.into)
    if (outcome.kind === 'not_member') {
      throw appError('InvalidArguments', `'${args.assignee}' is not a member of project '${ctx.project.slug}'.`, [{ path: 'assignee', message: 'is not a member of this project' }])
    }
    return { event_id: args.event_id, assignee: outcome.opportunity.assignee, version: outcome.opportunity.version }
  },
})
