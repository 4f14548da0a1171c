// Outgoing webhooks: subscriptions, the outbox of deliveries, and the worker's claims.
// A change writes its messages with `enqueueWebhooks` in its own transaction: a rolled-back
// change leaves no message, a committed one is never lost (the worker delivers it later).
import { and, desc, eq, sql } from '../orm.ts'
import { rowsOf, type Queryable } from '../client.ts'
import { webhookDeliveries, webhooks } from '../schema.ts'
import type { WebhookEventType } from '../../schemas/webhooks.ts'
import { newId } from '../ids.ts'
import { sealContexts, type Sealer } from '../secret-box.ts'

/** A subscription as stored: `secret` and `previousSecret` are sealed (db/secret-box.ts). */
export type WebhookRow = typeof webhooks.$inferSelect
export type DeliveryRow = typeof webhookDeliveries.$inferSelect

/** The body of a message (Standard Webhooks): its type, when it happened, and the resource. */
export function webhookPayload(type: string, at: Date, data: unknown) {
  return { type, timestamp: at.toISOString(), data }
}

/**
 * One message per event for every enabled subscription of the project to `type`, in one
 * statement of the caller's transaction. A project without subscriptions costs one indexed
 * lookup that inserts nothing.
 */
// (Dates go in as ISO text: postgres.js takes no Date in a raw statement.)
export async function enqueueWebhooks(db: Queryable, projectId: string, type: WebhookEventType, at: Date, data: unknown[]): Promise<void> {
  if (data.length === 0) return
  const payloads = JSON.stringify(data.map((d) => webhookPayload(type, at, d)))
  // A NOTIFY when something was queued wakes the workers at the commit (none on a rollback).
  await db.execute(sql`
    with queued as (
      insert into webhook_deliveries (id, webhook_id, type, payload, created_at, next_attempt_at)
      select 'msg_' || replace(gen_random_uuid()::text, '-', ''), w.id, ${type}, p.value, ${at.toISOString()}::timestamptz, ${at.toISOString()}::timestamptz
      from webhooks w cross join json_array_elements(${payloads}::json) with ordinality as p(value, n)
      where w.project_id = ${projectId} and w.enabled and ${type} = any(w.events)
      order by p.n
      returning 1
    )
    select pg_notify(${WEBHOOKS_CHANNEL}, '') from (select 1 from queued limit 1) as any_queued`)
}

/** Throttling: attempts are counted in windows this long, over the last second (and one window more). */
export const THROTTLE_WINDOW_MS = 100
const THROTTLE_SPAN_MS = 1000

/** A text[] as the drivers hand it over: an array (postgres.js, PGlite) or its literal '{a,b}'. */
function textArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String)
  if (typeof value === 'string') return value.replace(/^\{|\}$/g, '').split(',').filter(Boolean)
  return []
}

/** The channel a commit that queued messages notifies, so that workers deliver at once. */
export const WEBHOOKS_CHANNEL = 'growthdesk_webhooks'

/** What one attempt came to. */
export interface DeliveryOutcome {
  id: string
  webhookId: string
  ok: boolean
  statusCode: number | null
  error: string | null
  latencyMs: number
  /** When to try again; null with `ok` false: failed for good. */
  retryAt: Date | null
  /** The endpoint answered 410 Gone: it is disabled (Standard Webhooks). */
  gone?: boolean
}

/** A delivery the worker claimed, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string
  webhookId: string
  type: string
  payload: unknown
  attempts: number
  url: string
  /** The signing secrets, opened; empty when `unreadable`. */
  secret: string
  /** Only while it still signs (previous_secret_until ahead). */
  previousSecret: string | null
  previousSecretUntil: Date | null
  /** The signatures to send (v1, v1a) and the body's shape. */
  schemes: string[]
  format: 'standard' | 'slack'
  /** The ed25519 key (whsk_…), opened; null without v1a. */
  signingKey: string | null
  /** Why the secrets could not be opened (a server key this instance lacks): the attempt fails with it. */
  unreadable?: string
}

/**
 * `box` seals the signing secrets on their way in and opens them for the worker: callers hand
 * in and get back plaintext (create, rotate, claim), the table holds only sealed values.
 */
export function createWebhooksRepository(db: Queryable, box: Sealer) {
  return {
    async create(input: {
      workspaceId: string;
      projectId: string;
      url: string;
      events: string[];
      description: string;
      secret: string;
      createdBy: string;
      now: Date
      format?: 'standard' | 'slack';
      signatures?: string[];
      keyPair?: { signingKey: string; publicKey: string } | null;
      rateLimit?: number | null
    }) {
      const id = newId('whk')
      const [row] = await db.insert(webhooks).values({
        id,
        workspaceId: input.workspaceId,
        projectId: input.projectId,
        url: input.url,
        events: input.events,
        description: input.description,
        secret: box.seal(input.secret, sealContexts.webhook(id)),
        format: input.format ?? 'standard',
        signatureSchemes: input.signatures ?? ['v1'],
        signingKey: input.keyPair ? box.seal(input.keyPair.signingKey, sealContexts.webhookSigningKey(id)) : null,
        publicKey: input.keyPair?.publicKey ?? null,
        rateLimit: input.rateLimit ?? null,
        createdBy: input.createdBy,
        createdAt: input.now,
        updatedAt: input.now,
      }).returning()
      return row!
    },

    async list(projectId: string): Promise<WebhookRow[]> {
      return db.select().from(webhooks).where(eq(webhooks.projectId, projectId)).orderBy(webhooks.createdAt, webhooks.id)
    },

    async find(id: string): Promise<WebhookRow | undefined> {
      const [row] = await db.select().from(webhooks).where(eq(webhooks.id, id))
      return row
    },

    /**
     * Changes only the sent fields, in one UPDATE; enabling again clears the failing state and the
     * reason the worker disabled it. `signatures` with v1a keeps the key pair there is (its public
     * key is in the receivers' trust lists) or takes `keyPair`, sealed here; without v1a the pair goes.
     */
    async update(id: string, change: {
      url?: string;
      events?: string[];
      description?: string;
      enabled?: boolean
      format?: 'standard' | 'slack';
      signatures?: string[];
      rateLimit?: number | null
    }, now: Date, keyPair?: { signingKey: string; publicKey: string }) {
      const { signatures, ...rest } = change
      const keys = signatures === undefined
        ? {}
        : signatures.includes('v1a') && keyPair
          ? {
              signingKey: sql`coalesce(${webhooks.signingKey}, ${box.seal(keyPair.signingKey, sealContexts.webhookSigningKey(id))})`,
              publicKey: sql`case when ${webhooks.signingKey} is null then ${keyPair.publicKey} else ${webhooks.publicKey} end`,
            }
          : { signingKey: null, publicKey: null }
      const [row] = await db.update(webhooks).set({
        ...rest,
        ...(signatures !== undefined ? { signatureSchemes: signatures } : {}),
        ...keys,
        ...(change.enabled === true ? { failing: false, consecutiveFailures: 0, disabledReason: null } : {}),
        updatedAt: now,
      }).where(eq(webhooks.id, id)).returning()
      return row
    },

    async remove(id: string): Promise<boolean> {
      return (await db.delete(webhooks).where(eq(webhooks.id, id)).returning({ id: webhooks.id })).length > 0
    },

    /**
     * The new secret signs from now on; the current one keeps signing beside it until `until`
     * (moved as it is stored: both are sealed for the webhook, not for the column).
     */
    async rotate(id: string, secret: string, now: Date, until: Date) {
      const [row] = await db.update(webhooks).set({
        previousSecret: sql`${webhooks.secret}`,
        previousSecretUntil: until,
        secret: box.seal(secret, sealContexts.webhook(id)),
        updatedAt: now,
      }).where(eq(webhooks.id, id)).returning()
      return row
    },

    /** One message to this subscription only (a test delivery). */
    async enqueueOne(webhookId: string, type: string, payload: unknown, now: Date): Promise<DeliveryRow> {
      const [row] = await db.insert(webhookDeliveries).values({ id: newId('msg'), webhookId, type, payload, createdAt: now, nextAttemptAt: now }).returning()
      await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`)
      return row!
    },

    async deliveries(webhookId: string, f: { status?: DeliveryRow['status']; limit: number; offset: number }) {
      const where = and(eq(webhookDeliveries.webhookId, webhookId), f.status ? eq(webhookDeliveries.status, f.status) : undefined)
      const [rows, [count]] = await Promise.all([
        db.select().from(webhookDeliveries).where(where).orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id)).limit(f.limit).offset(f.offset),
        db.select({ n: sql<number>`count(*)::int` }).from(webhookDeliveries).where(where),
      ])
      return { items: rows, total: count!.n }
    },

    /** Sends a message again (same webhook-id), at once, with a fresh schedule of retries. */
    async redeliver(webhookId: string, id: string, now: Date): Promise<DeliveryRow | undefined> {
      const [row] = await db.update(webhookDeliveries)
        .set({ status: 'pending', attempts: 0, nextAttemptAt: now, deliveredAt: null })
        .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.webhookId, webhookId)))
        .returning()
      if (row) await db.execute(sql`select pg_notify(${WEBHOOKS_CHANNEL}, '')`)
      return row
    },

    /**
     * Claims up to `limit` due messages of enabled subscriptions: the rows are locked with SKIP
     * LOCKED (another instance claims others) and leased until `leaseUntil` (a claim whose process
     * dies is due again then). Each claim counts as an attempt.
     *
     * An endpoint with a rate limit gets at most that many attempts started in any second, across
     * instances: its row is locked for the claim (FOR UPDATE SKIP LOCKED: another instance's claim
     * leaves that endpoint alone meanwhile), the claim counts the attempts started in its 100 ms
     * windows of the last 1.1 s (rate_limit_hits, the fair-use counters' table), takes no more than
     * the rest of the limit, and adds what it took, in the same transaction. Two claims less than a
     * second apart are at most 10 windows apart, so both are counted together: the limit holds for
     * every one-second span, not only for whole seconds.
     */
    async claim(now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
      const window = Math.floor(now.getTime() / THROTTLE_WINDOW_MS) * THROTTLE_WINDOW_MS
      const at = now.toISOString()
      const rows = await db.transaction(async (tx) => {
        const locked = rowsOf<{ id: string }>(await tx.execute(sql`
          select w.id from webhooks w
          where w.rate_limit is not null and w.enabled
            and exists (select 1 from webhook_deliveries d where d.webhook_id = w.id and d.status = 'pending' and d.next_attempt_at <= ${at}::timestamptz)
          order by w.id
          for update of w skip locked`)).map((r) => r.id)
        // The statement below reads the counters after the lock: a claim that held it before has committed.
        const result = await tx.execute(sql`
          with limited as (
            select w.id, greatest(0, w.rate_limit - coalesce((
              select sum(h.hits) from rate_limit_hits h
              where h.key = 'webhook:' || w.id and h.window_start > ${window - THROTTLE_SPAN_MS - THROTTLE_WINDOW_MS}
            ), 0))::int as allowed
            from webhooks w where w.id in (select jsonb_array_elements_text(${JSON.stringify(locked)}::jsonb))
          ), candidates as (
            (select d.id, d.next_attempt_at from webhook_deliveries d
              where d.status = 'pending' and d.next_attempt_at <= ${at}::timestamptz
                and exists (select 1 from webhooks w where w.id = d.webhook_id and w.enabled and w.rate_limit is null)
              order by d.next_attempt_at
              limit ${limit})
            union all
            select c.id, c.next_attempt_at from limited l cross join lateral (
              select d.id, d.next_attempt_at from webhook_deliveries d
              where d.webhook_id = l.id and d.status = 'pending' and d.next_attempt_at <= ${at}::timestamptz
              order by d.next_attempt_at
              limit l.allowed
            ) c
          ), due as (
            select d.id from webhook_deliveries d
            where d.id in (select id from candidates order by next_attempt_at limit ${limit})
              and d.status = 'pending' and d.next_attempt_at <= ${at}::timestamptz
            for update of d skip locked
          ), claimed as (
            update webhook_deliveries d set next_attempt_at = ${leaseUntil.toISOString()}::timestamptz, attempts = d.attempts + 1
            from due, webhooks w
            where d.id = due.id and w.id = d.webhook_id
            returning d.id, d.webhook_id, d.type, d.payload, d.attempts, w.url, w.secret, w.previous_secret, w.previous_secret_until,
              w.format, w.signature_schemes, w.signing_key, w.rate_limit
          ), counted as (
            insert into rate_limit_hits (key, window_start, hits)
            select 'webhook:' || c.webhook_id, ${window}, count(*)::int from claimed c where c.rate_limit is not null group by c.webhook_id
            order by 1
            on conflict (key, window_start) do update set hits = rate_limit_hits.hits + excluded.hits
          )
          select * from claimed`)
        return rowsOf<Record<string, unknown>>(result)
      })
      return rows.map((r) => {
        const webhookId = r.webhook_id as string
        const previousSecretUntil = r.previous_secret_until == null ? null : new Date(r.previous_secret_until as string)
        const claimed: ClaimedDelivery = {
          id: r.id as string,
          webhookId,
          type: r.type as string,
          payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload,
          attempts: Number(r.attempts),
          url: r.url as string,
          secret: '',
          previousSecret: null,
          previousSecretUntil,
          schemes: textArray(r.signature_schemes),
          format: r.format === 'slack' ? 'slack' : 'standard',
          signingKey: null,
        }
        // One message whose secrets do not open fails alone; the others of the batch go out.
        try {
          const context = sealContexts.webhook(webhookId)
          claimed.secret = box.open(r.secret as string, context)
          const previous = r.previous_secret as string | null
          if (previous !== null && previousSecretUntil && previousSecretUntil > now) claimed.previousSecret = box.open(previous, context)
          if (r.signing_key != null && claimed.schemes.includes('v1a')) claimed.signingKey = box.open(r.signing_key as string, sealContexts.webhookSigningKey(webhookId))
        } catch (err) {
          claimed.secret = ''
          claimed.signingKey = null
          claimed.unreadable = `The signing secret could not be opened: ${(err as Error).message}`
        }
        return claimed
      })
    },

    /**
     * Sends an endpoint's messages created in [since, until] again (all that were sent or failed, or
     * only the failed ones), oldest first, at most `cap`, in one statement: each keeps its msg_ id
     * (the webhook-id receivers de-duplicate by) and gets a fresh schedule, as redeliver does.
     * Messages still pending are on their way already and left alone. `nextSince`: the creation
     * time of the first message left for another call (null when none is).
     */
    async replay(webhookId: string, f: { since: Date; until: Date; onlyFailed: boolean; cap: number }, now: Date): Promise<{ queued: number; nextSince: Date | null }> {
      const statuses = JSON.stringify(f.onlyFailed ? ['failed'] : ['succeeded', 'failed'])
      const result = await db.execute(sql`
        with matching as (
          select d.id, d.created_at from webhook_deliveries d
          where d.webhook_id = ${webhookId} and d.created_at >= ${f.since.toISOString()}::timestamptz and d.created_at <= ${f.until.toISOString()}::timestamptz
            and d.status in (select jsonb_array_elements_text(${statuses}::jsonb))
          order by d.created_at, d.id
          limit ${f.cap + 1}
        ), chosen as (
          select id from matching order by created_at, id limit ${f.cap}
        ), queued as (
          update webhook_deliveries d set status = 'pending', attempts = 0, next_attempt_at = ${now.toISOString()}::timestamptz, delivered_at = null
          from chosen where d.id = chosen.id and d.status <> 'pending'
          returning 1
        )
        select (select count(*)::int from queued) as queued,
          (select created_at from matching order by created_at, id offset ${f.cap} limit 1) as next_since,
          (select pg_notify(${WEBHOOKS_CHANNEL}, '') from (select 1 from queued limit 1) as any_queued) as notified`)
      const [row] = rowsOf<{ queued: number; next_since: string | Date | null }>(result)
      return { queued: Number(row?.queued ?? 0), nextSince: row?.next_since == null ? null : new Date(row.next_since) }
    },

    /**
     * The outcomes of several attempts, in one statement: each message succeeded, is retried at
     * `retryAt`, or failed for good (`retryAt` null). Outcomes are in the order they finished; per
     * endpoint, a success clears the failing state and the failures after the last success are
     * counted (from zero after a success, else on top of the stored count). A success on an
     * endpoint already at zero writes nothing there (an UPDATE that matches no row takes no lock).
     */
    async finish(outcomes: DeliveryOutcome[], now: Date, failingAfter: number): Promise<void> {
      if (outcomes.length === 0) return
      const perEndpoint = new Map<string, { succeeded: boolean; failures: number; gone: boolean }>()
      for (const o of outcomes) {
        const e = perEndpoint.get(o.webhookId) ?? { succeeded: false, failures: 0, gone: false }
        if (o.ok) Object.assign(e, { succeeded: true, failures: 0 })
        else e.failures += 1
        if (o.gone) e.gone = true
        perEndpoint.set(o.webhookId, e)
      }
      const rows = JSON.stringify(outcomes.map((o) => ({
        id: o.id,
        status: o.ok ? 'succeeded' : o.retryAt ? 'pending' : 'failed',
        retry_at: o.retryAt?.toISOString() ?? null,
        status_code: o.statusCode,
        error: o.error === null ? null : o.error.slice(0, 500),
        latency_ms: o.latencyMs,
        ok: o.ok,
      })))
      const endpoints = JSON.stringify([...perEndpoint].map(([id, e]) => ({ id, succeeded: e.succeeded, failures: e.failures, gone: e.gone })))
      await db.execute(sql`
        with o as (
          select * from jsonb_to_recordset(${rows}::jsonb)
            as o(id text, status text, retry_at timestamptz, status_code int, error text, latency_ms int, ok boolean)
        ), finished as (
          update webhook_deliveries d set
            status = o.status,
            next_attempt_at = coalesce(o.retry_at, d.next_attempt_at),
            last_status_code = o.status_code,
            last_error = o.error,
            last_latency_ms = o.latency_ms,
            delivered_at = case when o.ok then ${now.toISOString()}::timestamptz else d.delivered_at end
          from o where d.id = o.id
          returning 1
        ), e as (
          select * from jsonb_to_recordset(${endpoints}::jsonb) as e(id text, succeeded boolean, failures int, gone boolean)
        )
        update webhooks w set
          consecutive_failures = case when e.succeeded then e.failures else w.consecutive_failures + e.failures end,
          failing = case when e.succeeded then e.failures >= ${failingAfter} else w.failing or w.consecutive_failures + e.failures >= ${failingAfter} end,
          enabled = w.enabled and not e.gone,
          disabled_reason = case when e.gone and w.enabled then ${`The receiver answered 410 Gone on ${now.toISOString()}: it asked for no more messages.`} else w.disabled_reason end
        from e
        where w.id = e.id and (e.failures > 0 or w.consecutive_failures <> 0 or w.failing)`)
    },
  }
}
