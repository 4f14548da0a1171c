import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { roleAtLeast } from '../core/access.ts'
import { buildDigest, slotPeriod } from '../core/digests.ts'
import { localDate } from '../core/time.ts'
import { Digest, DigestFrequency } from '../schemas/digests.ts'

export default defineOperation({
  name: 'preview_digest',
  title: 'Preview the digest',
  description:
    'Metrics digest of the project as it would go out now, without sending it: registrations, daily users and top events ' +
    'against the previous period, new, pending and adopted opportunities, alerts. `frequency` defaults to the ' +
    'schedule\'s (daily without one): yesterday, or the 7 days ending yesterday, in the project time zone. ' +
    '`top_new` needs review access (empty for a viewer).',
  scope: 'project',
  role: 'viewer',
  toolset: 'metrics',
  input: Type.Object({ frequency: Type.Optional(DigestFrequency) }, { additionalProperties: false }),
  output: Digest,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'The digest as scheduled', args: {} },
      { title: 'A weekly digest now', args: { frequency: 'weekly' } },
    ],
    invalid: [{ title: 'A period of its own: a digest covers the days before today', args: { from: '2026-11-01' }, field: 'from' }],
  },
  async handler(args, ctx) {
    const frequency = args.frequency ?? (await ctx.repos.digests.find(ctx.project.id))?.frequency ?? 'daily'
    const now = ctx.now()
    const period = slotPeriod(frequency, localDate(now, ctx.project.timezone))
    const digest = await buildDigest(ctx.repos, ctx.project, frequency, period, now)
    // What the opportunities say is for review access (as the listing); a viewer gets the counts.
    if (!roleAtLeast(ctx.project.role, 'reviewer')) digest.opportunities.top_new = []
    return digest
  },
})
