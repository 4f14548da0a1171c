import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, IfVersion, Version } from '../schemas/opportunities.ts'
import { versionConflict } from './review-opportunity.ts'
import { mergedConflict, TagNames, tagNames } from './triage-args.ts'
import { MAX_TAGS } from '../db/repositories/tags.ts'

export default defineOperation({
  name: 'tag_opportunity',
  title: 'Tag a growth opportunity',
  description:
    'Opportunity tags: `add` and/or `remove` tags of a growth opportunity by name (a name new to the project makes the ' +
    'tag; any case names the same tag; at most 20 per opportunity). The change joins its history. With `if_version` it ' +
    'changes only if no one changed it since (else a `conflict`). A merged opportunity is refused. Returns its tags and ' +
    'version. Needs review access.',
  toolset: 'triage',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object({
    event_id: EventId,
    add: Type.Optional(TagNames('Tags to put on it (made on first use).')),
    remove: Type.Optional(TagNames('Tags to take off it.')),
    if_version: Type.Optional(IfVersion),
  }, { additionalProperties: false }),
  output: Type.Object({
    event_id: Type.String(),
    tags: Type.Array(Type.String(), { description: 'Its tags now, in name order.' }),
    version: Version,
  }),
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'Tag an opportunity pricing and enterprise', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', add: ['pricing', 'enterprise'] } },
      { title: 'Swap tags, only if no one changed it since you read it (version 1)', args: { event_id: 'opp_9Tg4Lm2Xc7Vb1Nq8Rz5w', add: ['churn risk'], remove: ['pricing'], if_version: 1 } },
    ],
    invalid: [
      { title: 'Nothing to add or remove', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3' }, field: '' },
      { title: 'A tag name over 40 characters', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', add: ['x'.repeat(41)] }, field: 'add[0]' },
      { title: 'A blank tag name', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', add: ['   '] }, field: 'add[0]' },
      { title: 'A tag name with a line break', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', remove: ['a\nb'] }, field: 'remove[0]' },
      { title: 'The same tag added and removed', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', add: ['Pricing'], remove: ['pricing'] }, field: 'remove[0]' },
      { title: 'Tags as one string', args: { event_id: 'opp_2x7Kq9LmVb4Nc8Rt1Yw3', add: 'pricing' }, field: 'add' },
    ],
  },
  async handler(args, ctx) {
    const add = tagNames(args.add, 'add')
    const remove = tagNames(args.remove, 'remove')
    if (add.length === 0 && remove.length === 0) {
      throw appError('InvalidArguments', 'Send tags to `add` and/or `remove`.', [{ path: '', message: 'must have at least one of add, remove' }])
    }
    const adding = new Set(add.map((n) => n.toLowerCase()))
    const both = (args.remove ?? []).findIndex((n) => adding.has(n.trim().toLowerCase()))
    if (both >= 0) {
      throw appError('InvalidArguments', `'${remove[both] ?? args.remove![both]}' is both added and removed: send it in one of them.`, [{ path: `remove[${both}]`, message: 'is also in add' }])
    }
    const outcome = await ctx.repos.tags.tag(ctx.project.id, args.event_id, add, remove, ctx.principal.userId, ctx.now(), args.if_version)
    if (outcome.kind === 'missing') throw appError('NotFound', `Opportunity '${args.event_id}' was not found in project '${ctx.project.slug}'.`)
    if (outcome.kind === 'moved') throw versionConflict(args.event_id, args.if_version!, outcome.version)
    if (outcome.kind === 'merged') throw mergedConflict(args.event_id, outcome.into)
    if (outcome.kind === 'too_many') {
      throw appError('InvalidArguments', `An opportunity carries at most ${MAX_TAGS} tags: this would make ${outcome.count}. Nothing was changed.`, [{ path: 'add', message: `would make ${outcome.count} tags (at most ${MAX_TAGS})` }])
    }
    return { event_id: args.event_id, tags: outcome.opportunity.tags, version: outcome.opportunity.version }
  },
})
