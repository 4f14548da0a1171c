import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'delete_webhook',
  title: 'Delete a webhook',
  description:
    'Webhook deletion: the subscription and its delivery log; messages not yet delivered are dropped. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({ id: WebhookId }, { additionalProperties: false }),
  output: Type.Object({ id: Type.String(), deleted: Type.Literal(true) }),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
  examples: {
    valid: [{ title: 'Delete a webhook and its delivery log', args: { id: 'whk_3Cj7Ry1Ua5Ei9Oz2Pw6m' } }],
    invalid: [{ title: 'No webhook', args: {}, field: 'id' }],
  },
  async handler(args, ctx) {
    await ownedWebhook(ctx, args.id)
    if (!(await ctx.repos.webhooks.remove(args.id))) throw appError('NotFound', `Webhook '${args.id}' was not found.`)
    return { id: args.id, deleted: true as const }
  },
})
