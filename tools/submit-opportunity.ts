import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { SubmissionFields, SubmissionResult } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'submit_opportunity',
  title: 'Submit a growth opportunity',
  description:
    'Submit a growth opportunity for the project so the team can review it. Use when you found a lead, partner, channel or ' +
    'user signal worth following up. Send `external_id` to make retries safe: the same external_id returns the existing ' +
    'opportunity (created: false) instead of a duplicate. Returns the opportunity with its event_id, status `pending`.',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object(SubmissionFields, { additionalProperties: false }),
  output: SubmissionResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  async handler(args, ctx) {
    const { opportunity, created } = await ctx.repos.opportunities.submit({
      projectId: ctx.project.id,
      submittedBy: ctx.principal.userId,
      contributionType: args.contribution_type,
      keyInformation: args.key_information,
      reason: args.reason,
      suggestedAction: args.suggested_action,
      sourceUrl: args.source_url,
      externalId: args.external_id,
      receivedAt: ctx.now(),
    })
    return { ...opportunity, created }
  },
})
