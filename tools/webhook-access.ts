// The webhook operations that name a webhook, not a project: the webhook's project decides
// access, and only its owners manage it. And the wire forms of a subscription and a delivery.
import type { WorkspaceContext } from '../core/operations.ts'
import { appError } from '../core/errors.ts'
import { roleAtLeast } from '../core/access.ts'
import type { DeliveryRow, WebhookRow } from '../db/repositories/webhooks.ts'
import type { Delivery, Webhook } from '../schemas/webhooks.ts'

export async function ownedWebhook(ctx: WorkspaceContext, id: string): Promise<WebhookRow> {
  const webhook = await ctx.repos.webhooks.find(id)
  const project = webhook && webhook.workspaceId === ctx.principal.workspaceId && (await ctx.repos.projects.access(ctx.principal, webhook.projectId))
  if (!webhook || !project) throw appError('NotFound', `Webhook '${id}' was not found.`)
  if (!roleAtLeast(project.role, 'owner')) {
    // The same error as the registry's for the project's owner operations (create_webhook).
    throw appError('Forbidden', `This needs the owner role in project '${project.slug}'; your access is ${project.role}.`)
  }
  return webhook
}

export function toWebhook(row: WebhookRow, now: Date): Webhook {
  return {
    id: row.id,
    project: row.projectId,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    disabled_reason: row.enabled ? null : row.disabledReason,
    format: row.format,
    signatures: row.signatureSchemes as ('v1' | 'v1a')[],
    public_key: row.publicKey,
    rate_limit: row.rateLimit,
    failing: row.failing,
    consecutive_failures: row.consecutiveFailures,
    previous_secret_expires_at: row.previousSecret && row.previousSecretUntil && row.previousSecretUntil > now ? row.previousSecretUntil.toISOString() : null,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    webhook: row.webhookId,
    type: row.type,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: row.status === 'pending' ? row.nextAttemptAt.toISOString() : null,
    last_status_code: row.lastStatusCode,
    last_error: row.lastError,
    last_latency_ms: row.lastLatencyMs,
    created_at: row.createdAt.toISOString(),
    delivered_at: row.deliveredAt?.toISOString() ?? null,
  }
}
