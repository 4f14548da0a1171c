import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { EventId, IfVersion } from '../schemas/opportunities.ts'
import { MergeResult, MergeSourceIds } from '../schemas/merges.ts'
import { versionConflict } from './review-opportunity.ts'

export default defineOperation({
  name: 'merge_opportunities',
  title: 'Merge duplicate growth opportunities',
  description:
    'Opportunity merge: fold 1–20 duplicate growth opportunities (`source_ids`) into one (`event_id`, the target), ' +
    'atomically. The target counts the reports (`report_count`) and gets a new `version`; each source is kept whole ' +
    '(texts, review state, history), leaves listings and shows `merged_into` (list_merged_opportunities lists them). ' +
    'unmerge_opportunity restores one exactly. A merged opportunity is no target, and a source must have none merged ' +
    'into it. With `if_version` (the target\'s `version` you read) it merges only if the target has not changed since ' +
    '(else a `conflict`). Needs review access.',
  scope: 'project',
  role: 'reviewer',
  toolset: 'triage',
  input: Type.Object(
    { event_id: Type.String({ pattern: EventId.pattern, description: 'The target: the opportunity that stays listed.' }), source_ids: MergeSourceIds, if_version: Type.Optional(IfVersion) },
    { additionalProperties: false }
  ),
  output: MergeResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [
      {
        title: 'Fold two duplicate reports of the same lead into the first one',
        args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: ['opp_1Dx5Lb8Qs3Vj7Ky2Wf6m', 'opp_4Nh9Pc2Xr6Gt1Bm5Js8d'] },
      },
      {
        title: 'Merge a duplicate only if no one has changed the target since you read it (version 1)',
        args: { event_id: 'opp_6Tq2Wz8Kf4Lm1Rb7Xc3v', source_ids: ['opp_9Jp3Hs5Nd1Yg8Qe2Ck7t'], if_version: 1 },
      },
    ],
    invalid: [
      { title: 'No sources', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: [] }, field: 'source_ids' },
      { title: 'The same source twice', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: ['opp_1Dx5Lb8Qs3Vj7Ky2Wf6m', 'opp_1Dx5Lb8Qs3Vj7Ky2Wf6m'] }, field: 'source_ids' },
      { title: 'More than 20 sources', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: Array.from({ length: 21 }, (_, i) => `opp_x${i}`) }, field: 'source_ids' },
      { title: 'The target among its sources', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: ['opp_8Mg3Rk6Tw1Zc4Hv9Np2q'] }, field: 'source_ids[0]' },
      { title: 'Not an opportunity id among the sources', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: ['opp_1Dx5Lb8Qs3Vj7Ky2Wf6m', 'mem_5Nq1Yc8ZrT3wLx7DfH2k'] }, field: 'source_ids[1]' },
      { title: 'No target', args: { source_ids: ['opp_1Dx5Lb8Qs3Vj7Ky2Wf6m'] }, field: 'event_id' },
      { title: 'A version below 1', args: { event_id: 'opp_8Mg3Rk6Tw1Zc4Hv9Np2q', source_ids: ['opp_1Dx5Lb8Qs3Vj7Ky2Wf6m'], if_version: 0 }, field: 'if_version' },
    ],
  },
  async handler(args, ctx) {
    const { event_id, source_ids, if_version } = args
    const self = source_ids.indexOf(event_id)
    if (self >= 0) {
      throw appError('InvalidArguments', `Opportunity '${event_id}' is the target: it cannot be merged into itself.`, [
        { path: `source_ids[${self}]`, message: 'is the target (event_id)' },
      ])
    }
    const outcome = await ctx.repos.merges.merge(ctx.project.id, event_id, source_ids, ctx.principal.userId, ctx.now(), if_version)
    const pathOf = (id: string) => (id === event_id ? 'event_id' : `source_ids[${source_ids.indexOf(id)}]`)
    switch (outcome.kind) {
      case 'missing': {
        const { missing } = outcome
        const names = missing.map((id) => `'${id}'`).join(', ')
        throw appError(
          'NotFound',
          `${missing.length === 1 ? 'Opportunity' : 'Opportunities'} ${names} ${missing.length === 1 ? 'was' : 'were'} not found in project '${ctx.project.slug}'; nothing was merged.`,
          missing.map((id) => ({ path: pathOf(id), message: `'${id}' was not found in this project` }))
        )
      }
      case 'already_merged': {
        const names = outcome.merged.map((m) => `'${m.id}' is merged into '${m.into}'`).join(', ')
        throw appError(
          'Conflict',
          `${names}; nothing was merged. A merged opportunity is neither a target nor a source: unmerge it first (unmerge_opportunity), or merge into '${outcome.merged[0]!.into}'.`,
          outcome.merged.map((m) => ({ path: pathOf(m.id), message: `'${m.id}' is merged into '${m.into}'` }))
        )
      }
      case 'has_sources': {
        const names = outcome.targets.map((h) => `'${h.id}' has ${h.sources} merged into it`).join(', ')
        throw appError(
          'Conflict',
          `${names}; nothing was merged. Merges are one level deep: merge into '${outcome.targets[0]!.id}' instead, or unmerge its sources first and merge them all into '${event_id}'.`,
          outcome.targets.map((h) => ({ path: pathOf(h.id), message: `'${h.id}' has ${h.sources} ${h.sources === 1 ? 'opportunity' : 'opportunities'} merged into it` }))
        )
      }
      case 'moved':
        throw versionConflict(event_id, if_version!, outcome.version)
      case 'merged':
        return { ...outcome.target, sources: outcome.sources }
    }
  },
})
