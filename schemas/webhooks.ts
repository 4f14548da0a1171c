// Outgoing webhooks on the wire: a subscription (never its secret, except once at creation and
// rotation) and the delivery log.
import { Type, type Static } from '@sinclair/typebox'
import { NullableTimestamp, StringEnum, Timestamp } from './atoms.ts'

/** The events a webhook can subscribe to. */
export const webhookEventTypes = [
  'opportunity.submitted', 'opportunity.reviewed', 'memory.added', 'memory.updated', 'memory.forgotten', 'project.updated',
  'opportunity.merged', 'opportunity.unmerged',
  'comment.created', 'comment.edited', 'comment.deleted',
  'opportunity.tagged', 'opportunity.assigned', 'tag.renamed', 'tag.deleted',
  'alert.triggered', 'alert.resolved', 'digest.ready',
] as const
export type WebhookEventType = (typeof webhookEventTypes)[number]

export const webhookFormats = ['standard', 'slack'] as const
export const signatureSchemeNames = ['v1', 'v1a'] as const

export const WebhookId = Type.String({ pattern: '^whk_[0-9A-Za-z]{1,40}$', description: 'The webhook id (whk_…).' })
export const DeliveryId = Type.String({ pattern: '^msg_[0-9A-Za-z]{1,40}$', description: 'The delivery id (msg_…), the webhook-id header of the message.' })

export const WebhookFields = {
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'Where to POST: an https:// URL (http:// only to a private-network address, where WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true allows it).' }),
  events: Type.Array(StringEnum(webhookEventTypes), { minItems: 1, maxItems: webhookEventTypes.length, uniqueItems: true, description: `The events to send: ${webhookEventTypes.join(', ')}.` }),
  description: Type.String({ maxLength: 500, description: 'What it is for (shown in the console).' }),
  format: StringEnum(webhookFormats, { description: '`standard` (default): the Standard Webhooks JSON envelope {type, timestamp, data}; `slack`: a Slack incoming-webhook message ({text, blocks}) for a hooks.slack.com URL.' }),
  signatures: Type.Array(StringEnum(signatureSchemeNames), {
    minItems: 1,
    maxItems: 2,
    uniqueItems: true,
    description: 'The signatures each message carries in webhook-signature: `v1` (HMAC-SHA256 with the whsec_ secret, the default), `v1a` (ed25519; its public key, whpk_…, is readable in the webhook), or both.',
  }),
  rate_limit: Type.Union([Type.Integer({ minimum: 1, maximum: 1000 }), Type.Null()], { description: 'At most this many messages a second to this URL (1–1000); null: no limit.' }),
}

export const Webhook = Type.Object({
  id: Type.String(),
  project: Type.String({ description: 'The project id.' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.String(),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()], { description: 'Why growthdesk disabled it (the receiver answered 410 Gone); null when enabled or paused by hand. Enabling it again clears it.' }),
  format: StringEnum(webhookFormats),
  signatures: Type.Array(StringEnum(signatureSchemeNames), { description: 'The signatures sent: v1, v1a or both.' }),
  public_key: Type.Union([Type.String(), Type.Null()], { description: 'With v1a: the ed25519 public key (whpk_ and the base64 of its 32 bytes) receivers verify v1a with; else null.' }),
  rate_limit: Type.Union([Type.Integer(), Type.Null()], { description: 'At most this many messages a second; null: no limit.' }),
  failing: Type.Boolean({ description: 'Repeated deliveries failed; the next success clears it.' }),
  consecutive_failures: Type.Integer(),
  previous_secret_expires_at: NullableTimestamp('Until then the secret before the last rotation signs too.'),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})
export type Webhook = Static<typeof Webhook>

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({ description: 'The signing secret (whsec_…): shown this once.' }),
})

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const

export const Delivery = Type.Object({
  id: Type.String({ description: 'The webhook-id header: the same on every attempt.' }),
  webhook: Type.String(),
  type: Type.String(),
  status: StringEnum(deliveryStatuses),
  attempts: Type.Integer(),
  next_attempt_at: NullableTimestamp('When it is tried next (pending only).'),
  last_status_code: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()], { description: 'The last failure: at most 500 characters of the answer or the error.' }),
  last_latency_ms: Type.Union([Type.Integer(), Type.Null()]),
  created_at: Timestamp(),
  delivered_at: NullableTimestamp(),
})
export type Delivery = Static<typeof Delivery>

export const ReplayResult = Type.Object({
  queued: Type.Integer({ description: 'How many messages were queued again (at most `limit`).' }),
  limit: Type.Integer({ description: 'The most one call queues.' }),
  next_since: NullableTimestamp('More messages of the window are left: call again with this `since`. Null when none is.'),
})
