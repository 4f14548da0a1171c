import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { Delivery, DeliveryId, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook, toDelivery } from './webhook-access.ts'

export default defineOperation({
  name: 'redeliver_webhook',
  title: 'Send a webhook message again',
  description:
    'Webhook redelivery: send one message (`delivery`, msg_…) of a webhook (`id`) again now, with the same webhook-id ' +
    '(receivers de-duplicate by it) and fresh retries. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({ id: WebhookId, delivery: DeliveryId }, { additionalProperties: false }),
  output: Delivery,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  examples: {
    valid: [{ title: 'Send a message again', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', delivery: 'msg_2Lk8Wd5Hc1Pj9Ty4Fm7s' } }],
    invalid: [
      { title: 'No message', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' }, field: 'delivery' },
      { title: 'A webhook id as the message', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', delivery: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' }, field: 'delivery' },
    ],
  },
  async handler(args, ctx) {
    await ownedWebhook(ctx, args.id)
    const row = await ctx.repos.webhooks.redeliver(args.id, args.delivery, ctx.now())
    if (!row) throw appError('NotFound', `Delivery '${args.delivery}' of webhook '${args.id}' was not found.`)
    return toDelivery(row)
  },
})
