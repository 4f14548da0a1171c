import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { checkWebhookTarget, newWebhookSecret } from '../core/webhooks.ts'
import { ProjectRef } from '../schemas/atoms.ts'
import { WebhookFields, WebhookWithSecret } from '../schemas/webhooks.ts'
import { toWebhook } from './webhook-access.ts'

export default defineOperation({
  name: 'create_webhook',
  title: 'Subscribe a URL to the project’s events',
  description:
    'Webhook subscription: POST some of the project\'s `events` to an https `url`, signed in the Standard Webhooks ' +
    'format and retried for over 24 h. Returns the subscription with its signing `secret` (whsec_…), shown this once. ' +
    'Owner only.',
  scope: 'project',
  toolset: 'admin',
  role: 'owner',
  input: Type.Object({
    project: Type.Optional(ProjectRef),
    url: WebhookFields.url,
    events: WebhookFields.events,
    description: Type.Optional(WebhookFields.description),
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
    ],
    invalid: [
      { title: 'No events', args: { url: 'https://crm.example.com/hooks/growthdesk' }, field: 'events' },
      { title: 'An event that does not exist', args: { url: 'https://crm.example.com/hooks/growthdesk', events: ['opportunity.deleted'] }, field: 'events[0]' },
      { title: 'A plain http:// URL', args: { url: 'http://crm.example.com/hooks/growthdesk', events: ['opportunity.submitted'] }, field: 'url' },
      { title: 'Not a URL', args: { url: 'crm.example.com', events: ['opportunity.submitted'] }, field: 'url' },
    ],
  },
  async handler(args, ctx) {
    const url = await checkWebhookTarget(args.url, ctx.webhookPolicy)
    const secret = newWebhookSecret()
    const now = ctx.now()
    const row = await ctx.repos.webhooks.create({
      workspaceId: ctx.principal.workspaceId,
      projectId: ctx.project.id,
      url,
      events: args.events,
      description: (args.description ?? '').trim(),
      secret,
      createdBy: ctx.principal.userId,
      now,
    })
    return { ...toWebhook(row, now), secret }
  },
})
