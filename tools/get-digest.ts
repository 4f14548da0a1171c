import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { toSchedule } from '../core/digests.ts'
import { DigestSchedule } from '../schemas/digests.ts'

export default defineOperation({
  name: 'get_digest',
  title: 'Read the digest schedule',
  description:
    'Metrics digest of the project: its schedule (daily or weekly, the hour and weekday in the project time zone, enabled), ' +
    'the last period sent and when the next is due; `digest` is null when none is set. preview_digest shows what it says.',
  scope: 'project',
  role: 'viewer',
  toolset: 'metrics',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ digest: Type.Union([DigestSchedule, Type.Null()]) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'The schedule, if any', args: {} }],
    invalid: [{ title: 'A frequency: this reads, set_digest sets', args: { frequency: 'daily' }, field: 'frequency' }],
  },
  async handler(_args, ctx) {
    const row = await ctx.repos.digests.find(ctx.project.id)
    return { digest: row ? toSchedule(row, ctx.project.timezone, ctx.now()) : null }
  },
})
