import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { newWebhookSecret, ROTATION_OVERLAP_MS } from '../core/webhooks.ts'
import { WebhookId, WebhookWithSecret } from '../schemas/webhooks.ts'
import { ownedWebhook, toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'rotate_webhook_secret',
  title: 'Rotate a webhook’s signing secret',
  description:
    'Webhook secret rotation: a new signing secret, returned this once; for 24 hours messages carry two signatures ' +
    '(new and previous), so the receiver switches without losing one. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({ id: WebhookId }, { additionalProperties: false }),
  output: WebhookWithSecret,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
  examples: {
    valid: [{ title: 'A new signing secret; the old one signs for 24 hours more', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' } }],
    invalid: [{ title: 'A secret of your choosing', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', secret: 'whsec_bXlzZWNyZXQ=' }, field: 'secret' }],
  },
  async handler(args, ctx) {
    await ownedWebhook(ctx, args.id)
    const secret = newWebhookSecret()
    const now = ctx.now()
    const row = await ctx.repos.webhooks.rotate(args.id, secret, now, new Date(now.getTime() + ROTATION_OVERLAP_MS))
    if (!row) throw appError('NotFound', `Webhook '${args.id}' was not found.`)
    return { ...toWebhook(row, now), secret }
  },
})
