import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { Webhook, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook, toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'get_webhook',
  title: 'Get a webhook',
  description:
    'Webhook by its id (whk_…), with its state; never its secret. Owner of its project only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({ id: WebhookId }, { additionalProperties: false }),
  output: Webhook,
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [{ title: 'A webhook and its state', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' } }],
    invalid: [
      { title: 'No webhook', args: {}, field: 'id' },
      { title: 'A delivery id instead of a webhook id', args: { id: 'msg_2Lk8Wd5Hc1Pj9Ty4Fm7s' }, field: 'id' },
    ],
  },
  async handler(args, ctx) {
    return toWebhook(await ownedWebhook(ctx, args.id), ctx.now())
  },
})
