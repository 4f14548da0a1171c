import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'

export default defineOperation({
  name: 'delete_digest',
  title: 'Delete the digest schedule',
  description:
    'Metrics digest of the project: delete its schedule, so no digest.ready message or mail goes out any more (set_digest ' +
    'with enabled false pauses it instead). `deleted` is false when there was none. Owner only.',
  scope: 'project',
  role: 'owner',
  toolset: 'metrics',
  input: Type.Object({}, { additionalProperties: false }),
  output: Type.Object({ project: Type.String(), deleted: Type.Boolean({ description: 'Whether there was a schedule to delete.' }) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
  examples: {
    valid: [{ title: 'Stop the digest', args: {} }],
    invalid: [{ title: 'A frequency: the whole schedule goes', args: { frequency: 'weekly' }, field: 'frequency' }],
  },
  async handler(_args, ctx) {
    return { project: ctx.project.id, deleted: await ctx.repos.digests.remove(ctx.project.id) }
  },
})
