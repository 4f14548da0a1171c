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
    'Subscribe an https `url` to some of the project\'s `events` (the argument lists the names), with an optional ' +
    '`description`. Each event is POSTed signed in the Standard Webhooks format, retried for over 24 h. Returns the ' +
    'subscription with its signing `secret` (whsec_…), shown this once. Owner only.',
  scope: 'project',
  role: 'owner',
  input: Type.Object({
    project: Type.Optional(ProjectRef),
    url: WebhookFields.url,
    events: WebhookFields.events,
    description: Type.Optional(WebhookFields.description),
  }, { additionalProperties: false }),
  output: WebhookWithSecret,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
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
