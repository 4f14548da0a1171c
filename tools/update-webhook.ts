import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { checkWebhookTarget } from '../core/webhooks.ts'
import { Webhook, WebhookFields, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook, toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'update_webhook',
  title: 'Update a webhook',
  description:
    'Webhook update: `url`, `events` (replaces the list), `description` and/or `enabled` (false pauses deliveries, ' +
    'true resumes them and clears the failing state); only the fields you send change. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({
    id: WebhookId,
    url: Type.Optional(WebhookFields.url),
    events: Type.Optional(WebhookFields.events),
    description: Type.Optional(WebhookFields.description),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries; true resumes them.' })),
  }, { additionalProperties: false }),
  output: Webhook,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  examples: {
    valid: [
      { title: 'Pause deliveries', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', enabled: false } },
      {
        title: 'A new URL, and memory events too',
        args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', url: 'https://crm.example.com/hooks/v2', events: ['opportunity.submitted', 'opportunity.reviewed', 'memory.added'], description: 'CRM sync, v2' },
      },
    ],
    invalid: [
      { title: 'Nothing to change', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' }, field: '' },
      { title: 'enabled as text', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', enabled: 'no' }, field: 'enabled' },
      { title: 'A URL with a password in it', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', url: 'https://bot:secret@crm.example.com/hooks' }, field: 'url' },
    ],
  },
  async handler(args, ctx) {
    const { id, ...change } = args
    if (Object.keys(change).length === 0) {
      throw appError('InvalidArguments', 'Send at least one of url, events, description or enabled.', [{ path: '', message: 'must have at least one of url, events, description, enabled' }])
    }
    await ownedWebhook(ctx, id)
    if (change.url !== undefined) change.url = await checkWebhookTarget(change.url, ctx.webhookPolicy)
    if (change.description !== undefined) change.description = change.description.trim()
    const now = ctx.now()
    const row = await ctx.repos.webhooks.update(id, change, now)
    if (!row) throw appError('NotFound', `Webhook '${id}' was not found.`)
    return toWebhook(row, now)
  },
})
