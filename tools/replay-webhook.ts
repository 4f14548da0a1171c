import { Type } from '@sinclair/typebox'
import { defineOperation } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { Timestamp } from '../schemas/atoms.ts'
import { ReplayResult, WebhookId } from '../schemas/webhooks.ts'
import { ownedWebhook } from './webhook-access.ts'

/** The most one replay queues: a larger window is replayed in several calls (`next_since`). */
export const REPLAY_LIMIT = 1000

export default defineOperation({
  name: 'replay_webhook',
  title: 'Replay a webhook’s messages of a time window',
  description:
    'Webhook replay: send again the messages of a webhook (`id`) created between `since` and `until` (ISO-8601), ' +
    'or with `only_failed` only those that failed, oldest first, at most 1000 a call. Each keeps its webhook-id ' +
    '(receivers de-duplicate by it) and gets fresh retries; messages still pending are on their way already. ' +
    'Answers how many were queued and, when more are left, the `next_since` to call again with. Owner only.',
  scope: 'workspace',
  toolset: 'admin',
  role: 'viewer',
  input: Type.Object({
    id: WebhookId,
    since: Timestamp('The first creation time replayed (inclusive).'),
    until: Type.Optional(Timestamp('The last creation time replayed (inclusive); default: now.')),
    only_failed: Type.Optional(Type.Boolean({ description: 'Only the messages that failed (default false: sent and failed ones).', default: false })),
  }, { additionalProperties: false }),
  output: ReplayResult,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  examples: {
    valid: [
      { title: 'What failed during an outage', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', since: '2026-11-20T08:00:00Z', until: '2026-11-20T14:00:00Z', only_failed: true } },
      { title: 'Every message since a given time, until now', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', since: '2025-01-01T00:00:00Z' } },
    ],
    invalid: [
      { title: 'No window', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e' }, field: 'since' },
      { title: 'A date that is not one', args: { id: 'whk_9Vb4Mn2Qs7Kp1Xz6Rt3e', since: 'yesterday' }, field: 'since' },
    ],
  },
  async handler(args, ctx) {
    const now = ctx.now()
    const since = new Date(args.since)
    const until = args.until === undefined ? now : new Date(args.until)
    if (until < since) {
      throw appError('InvalidArguments', `until (${args.until ?? `now, ${now.toISOString()}`}) is before since (${args.since}).`, [{ path: 'until', message: 'must not be before since' }])
    }
    await ownedWebhook(ctx, args.id)
    const { queued, nextSince } = await ctx.repos.webhooks.replay(args.id, { since, until, onlyFailed: args.only_failed ?? false, cap: REPLAY_LIMIT }, now)
    return { queued, limit: REPLAY_LIMIT, next_since: nextSince?.toISOString() ?? null }
  },
})
