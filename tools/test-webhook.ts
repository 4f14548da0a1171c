import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { webhookPayload } from '../db/repositories/webhooks.ts'
import { Delivery, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook, toDelivery, toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'test_webhook',
  title: 'Send a test message to a webhook',
  description:
    'Webhook test: queue a `webhook.test` message now, signed and retried like any other; list_webhook_deliveries ' +
    'shows how it went. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({ id: WebhookId }, { additionalProperties: false }),
  output: Delivery,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  examples: {
    valid: [{ title: 'Queue a webhook.test message', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' } }],
    invalid: [{ title: 'Another message type: it sends webhook.test', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', type: 'opportunity.submitted' }, field: 'type' }],
  },
  async handler(args, ctx) {
    const webhook = await ownedWebhook(ctx, args.id)
    const now = ctx.now()
    const row = await ctx.repos.webhooks.enqueueOne(webhook.id, 'webhook.test', webhookPayload('webhook.test', now, toWebhook(webhook, now)), now)
    return toDelivery(row)
  },
})
