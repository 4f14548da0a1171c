import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { ProjectRef } from '../schemas/atoms.ts'
import { Webhook } from '../schemas/webhooks.ts'
import { toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'list_webhooks',
  title: 'List the project’s webhooks',
  description:
    'Webhooks of the project, oldest first, with their state (enabled, failing); never their secrets. Owner only.',
  scope: 'project',
  toolset: 'admin',
  role: 'owner',
  input: Type.Object({ project: Type.Optional(ProjectRef) }, { additionalProperties: false }),
  output: Type.Object({ items: Type.Array(Webhook) }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'The project’s webhooks', args: {} }],
    invalid: [{ title: 'A filter it does not take', args: { enabled: true }, field: 'enabled' }],
  },
  async handler(_args, ctx) {
    const now = ctx.now()
    return { items: (await ctx.repos.webhooks.list(ctx.project.id)).map((w) => toWebhook(w, now)) }
  },
})
