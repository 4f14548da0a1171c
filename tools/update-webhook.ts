import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { checkWebhookTarget, newSigningKeyPair } from '../core/webhooks.ts'
import { Webhook, WebhookFields, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook, toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'update_webhook',
  title: 'Update a webhook',
  description:
    'Webhook update: `url`, `events` (replaces the list), `description`, `enabled` (false pauses deliveries, ' +
    'true resumes them and clears the failing state and a 410\'s disabling), `format`, `signatures` (adding v1a makes an ' +
    'ed25519 key pair, keeping v1a keeps it, dropping it deletes it) and/or `rate_limit` (null: none); only the fields you send change. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({
    id: WebhookId,
    url: Type.Optional(WebhookFields.url),
    events: Type.Optional(WebhookFields.events),
    description: Type.Optional(WebhookFields.description),
    enabled: Type.Optional(Type.Boolean({ description: 'false pauses deliveries; true resumes them.' })),
    format: Type.Optional(WebhookFields.format),
    signatures: Type.Optional(WebhookFields.signatures),
    rate_limit: Type.Optional(WebhookFields.rate_limit),
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
      { title: 'Sign with ed25519 (v1a) too; its public key is in the answer', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', signatures: ['v1', 'v1a'] } },
      { title: 'No more than 5 messages a second', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', rate_limit: 5 } },
    ],
    invalid: [
      { title: 'Nothing to change', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' }, field: '' },
      { title: 'enabled as text', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', enabled: 'no' }, field: 'enabled' },
      { title: 'A URL with a password in it', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', url: 'https://bot:secret@crm.example.com/hooks' }, field: 'url' },
      { title: 'No signature at all', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', signatures: [] }, field: 'signatures' },
      { title: 'A format it does not send', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', format: 'teams' }, field: 'format' },
    ],
  },
  async handler(args, ctx) {
    const { id, rate_limit: rateLimit, ...rest } = args
    const change = { ...rest, ...(rateLimit !== undefined ? { rateLimit } : {}) }
    if (Object.keys(change).length === 0) {
      throw appError('InvalidArguments', 'Send at least one of url, events, description, enabled, format, signatures or rate_limit.', [{ path: '', message: 'must have at least one of url, events, description, enabled, format, signatures, rate_limit' }])
    }
    await ownedWebhook(ctx, id)
    if (change.url !== undefined) change.url = await checkWebhookTarget(change.url, ctx.webhookPolicy)
    if (change.description !== undefined) change.description = change.description.trim()
    const now = ctx.now()
    // A pair is made in case the webhook has none yet; the UPDATE keeps the one it has.
    const row = await ctx.repos.webhooks.update(id, change, now, change.signatures?.includes('v1a') ? newSigningKeyPair() : undefined)
    if (!row) throw appError('NotFound', `Webhook '${id}' was not found.`)
    return toWebhook(row, now)
  },
})
