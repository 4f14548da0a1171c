import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { checkWebhookTarget, newSigningKeyPair, newWebhookSecret } from '../core/webhooks.ts'
import { ProjectRef } from '../schemas/atoms.ts'
import { WebhookFields, WebhookWithSecret } from '../schemas/webhooks.ts'
import { toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'create_webhook',
  title: 'Subscribe a URL to the project’s events',
  description:
    'Webhook subscription: POST some of the project\'s `events` to an https `url`, signed in the Standard Webhooks ' +
    'format (`signatures`: v1 HMAC, v1a ed25519, or both) and retried for over 3 days; `format: "slack"` sends Slack\'s ' +
    'incoming-webhook message instead of the JSON envelope; `rate_limit` caps messages a second. Returns the subscription ' +
    'with its signing `secret` (whsec_…), shown this once. Owner only.',
  scope: 'project',
  toolset: 'admin',
  role: 'owner',
  input: Type.Object({
    project: Type.Optional(ProjectRef),
    url: WebhookFields.url,
    events: WebhookFields.events,
    description: Type.Optional(WebhookFields.description),
    format: Type.Optional(WebhookFields.format),
    signatures: Type.Optional(WebhookFields.signatures),
    rate_limit: Type.Optional(WebhookFields.rate_limit),
  }, { additionalProperties: false }),
  output: WebhookWithSecret,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  examples: {
    valid: [
      {
        title: 'Send new and reviewed opportunities to a CRM',
        args: { url: 'https://crm.example.com/hooks/growthdesk', events: ['opportunity.submitted', 'opportunity.reviewed'], description: 'CRM sync' },
      },
      { title: 'Every memory change, to a team chat bridge', args: { url: 'https://chat.example.com/incoming/7f3a', events: ['memory.added', 'memory.updated', 'memory.forgotten'] } },
      { title: 'Alerts and digests to a Slack channel', args: { url: 'https://hooks.slack.com/services/T0001/B0001/XXXXXXXX', events: ['alert.triggered', 'alert.resolved', 'digest.ready'], format: 'slack' } },
      { title: 'Signed with v1 and v1a (ed25519), at most 10 a second', args: { url: 'https://crm.example.com/hooks/growthdesk', events: ['opportunity.submitted'], signatures: ['v1', 'v1a'], rate_limit: 10 } },
    ],
    invalid: [
      { title: 'No events', args: { url: 'https://crm.example.com/hooks/growthdesk' }, field: 'events' },
      { title: 'An event that does not exist', args: { url: 'https://crm.example.com/hooks/growthdesk', events: ['opportunity.deleted'] }, field: 'events[0]' },
      { title: 'A plain http:// URL', args: { url: 'http://crm.example.com/hooks/growthdesk', events: ['opportunity.submitted'] }, field: 'url' },
      { title: 'Not a URL', args: { url: 'crm.example.com', events: ['opportunity.submitted'] }, field: 'url' },
      { title: 'A signature scheme that does not exist', args: { url: 'https://crm.example.com/hooks/growthdesk', events: ['opportunity.submitted'], signatures: ['v2'] }, field: 'signatures[0]' },
      { title: 'A rate limit of 0', args: { url: 'https://crm.example.com/hooks/growthdesk', events: ['opportunity.submitted'], rate_limit: 0 }, field: 'rate_limit' },
    ],
  },
  async handler(args, ctx) {
    const url = await checkWebhookTarget(args.url, ctx.webhookPolicy)
    const secret = newWebhookSecret()
    const signatures = args.signatures ?? ['v1']
    const now = ctx.now()
    const row = await ctx.repos.webhooks.create({
      workspaceId: ctx.principal.workspaceId,
      projectId: ctx.project.id,
      url,
      events: args.events,
      description: (args.description ?? '').trim(),
      secret,
      format: args.format ?? 'standard',
      signatures,
      keyPair: signatures.includes('v1a') ? newSigningKeyPair() : null,
      rateLimit: args.rate_limit ?? null,
      createdBy: ctx.principal.userId,
      now,
    })
    return { ...toWebhook(row, now), secret }
  },
})
