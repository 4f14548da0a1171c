import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { StringEnum } from '../schemas/atoms.ts'
import { Delivery, deliveryStatuses, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook, toDelivery } from './webhook-access.ts'

export default defineOperation({
  name: 'list_webhook_deliveries',
  title: 'A webhook’s delivery log',
  description:
    'Webhook deliveries, newest first: status (pending, succeeded, failed), attempts, next attempt, last response ' +
    'code, error excerpt and latency; optional `status` filter, `page`/`page_size`. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({
    id: WebhookId,
    status: Type.Optional(StringEnum(deliveryStatuses)),
    page: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  }, { additionalProperties: false }),
  output: Type.Object({ items: Type.Array(Delivery), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true },
  examples: {
    valid: [
      { title: 'The messages that failed', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', status: 'failed' } },
      { title: 'Every message, the second page of 50', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', page: 2, page_size: 50 } },
    ],
    invalid: [
      { title: 'A status that does not exist', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', status: 'sent' }, field: 'status' },
      { title: 'More than 100 a page', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', page_size: 101 }, field: 'page_size' },
    ],
  },
  async handler(args, ctx) {
    await ownedWebhook(ctx, args.id)
    const page = args.page ?? 1
    const pageSize = args.page_size ?? 20
    const { items, total } = await ctx.repos.webhooks.deliveries(args.id, { status: args.status, limit: pageSize, offset: (page - 1) * pageSize })
    return { items: items.map(toDelivery), total, page, page_size: pageSize }
  },
})
