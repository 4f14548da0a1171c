import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { SubmissionFields, SubmissionResult } from '../schemas/opportunities.ts'

export default defineOperation({
  name: 'submit_opportunity',
  title: 'Submit a growth opportunity',
  description:
    'Growth opportunity submission: file a lead, partner, channel or user signal for the team to review (status ' +
    '`pending`); the same `external_id` again returns the existing one (created: false).',
  scope: 'project',
  role: 'reviewer',
  input: Type.Object(SubmissionFields, { additionalProperties: false }),
  output: SubmissionResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      {
        title: 'A lead found in a forum thread, safe to retry with its external_id',
        args: {
          contribution_type: 'potential_user_opportunity',
          key_information: 'The CTO of a 40-person agency asked on Hacker News for a tool that tracks growth experiments per client',
          reason: 'Matches our audience, and they are choosing a tool this month',
          suggested_action: 'Reply in the thread with a short demo video and offer a call',
          source_url: 'https://forum.example.com/t/pricing-for-small-teams/4123',
          external_id: 'hn-41234567',
        },
      },
      {
        title: 'A partnership idea',
        args: {
          contribution_type: 'partnership',
          key_information: 'A newsletter on product analytics (12,000 readers) sells one sponsored slot a month',
          reason: 'Its readers are the product teams we sell to',
          suggested_action: 'Ask for the media kit and the price of a November slot',
        },
      },
    ],
    invalid: [
      {
        title: 'No suggested action',
        args: { contribution_type: 'partnership', key_information: 'A newsletter sells sponsored slots', reason: 'Our audience reads it' },
        field: 'suggested_action',
      },
      {
        title: 'A type that is not snake_case',
        args: { contribution_type: 'Partnership Idea', key_information: 'A newsletter sells sponsored slots', reason: 'Our audience reads it', suggested_action: 'Ask for the price' },
        field: 'contribution_type',
      },
      {
        title: 'A source that is not an http(s) URL',
        args: { contribution_type: 'partnership', key_information: 'A newsletter sells sponsored slots', reason: 'Our audience reads it', suggested_action: 'Ask for the price', source_url: 'ftp://example.com/post' },
        field: 'source_url',
      },
    ],
  },
  async handler(args, ctx) {
    const { opportunity, created, similar } = await ctx.repos.opportunities.submit({
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
    return { ...opportunity, created, similar }
  },
})
