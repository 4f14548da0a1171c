// The delivery worker of outgoing webhooks: claims due messages of the outbox (FOR UPDATE SKIP
// LOCKED, so instances on one PostgreSQL share the work and each message goes out once in the
// common case), POSTs them signed (Standard Webhooks), records the outcome and schedules retries.
// Started with the app when the configuration turns it on, stopped on close; tests drive it
// with `app.webhooks.deliverDue()`.
import fp from 'fastify-plugin'
import type { FastifyInstance } from 'fastify'
import type { LookupFunction } from 'node:net'
import { WEBHOOKS_CHANNEL, type ClaimedDelivery, type DeliveryOutcome } from '../db/repositories/webhooks.ts'
import {
  BlockedAddressError, FAILING_AFTER, nextAttemptAt, resolvePublic, signatureHeader, type WebhookPolicy,
} from '../core/webhooks.ts'
import { slackMessage, type Envelope } from '../core/slack.ts'

declare module 'fastify' {
  interface FastifyInstance {
    webhooks: WebhookWorker
  }
}

export interface WebhookWorker {
  /** Delivers the messages due now (one batch); resolves with how many were attempted. */
  deliverDue(): Promise<number>
}

export interface WebhooksPluginOptions {
  policy: WebhookPolicy
  /** Run the worker on a timer (WEBHOOKS_ENABLED); off: messages wait in the outbox. */
  enabled: boolean
  intervalMs?: number
}

export const DELIVERY_TIMEOUT_MS = 10_000
/** A claim is held this long: a process that dies mid-delivery leaves it due again after it. */
const LEASE_MS = 60_000
const BATCH = 50
const EXCERPT = 500

// Not an ES import of node:http(s): that loads Node's fetch (undici) at start; see core/errors.ts.
const httpModules = () => ({ http: process.getBuiltinModule('node:http'), https: process.getBuiltinModule('node:https') })

interface Outcome {
  ok: boolean
  statusCode: number | null
  error: string | null
  latencyMs: number
  /** A 429's or 503's Retry-After header as sent (seconds or an HTTP date; RFC 9110 §10.2.3). */
  retryAfter?: string
}

/** Retry-After as ms from `now`: delay-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now: Date): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim()
  if (!text) return undefined
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000
  if (!/ GMT$/.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime())
}

/**
 * One POST. The connection goes to an address the policy accepted: the lookup that the socket
 * uses is the checked one (no second resolution for a DNS rebinding to exploit). Redirects are
 * not followed (a 3xx is a failure); at most 500 characters of the response are kept.
 */
export async function post(d: ClaimedDelivery, body: string, headers: Record<string, string>, policy: WebhookPolicy): Promise<Outcome> {
  const started = performance.now()
  const latency = () => Math.round(performance.now() - started)
  let url: URL
  let addresses: { address: string; family: number }[]
  try {
    url = new URL(d.url)
    addresses = await resolvePublic(url, policy)
  } catch (err) {
    return { ok: false, statusCode: null, error: err instanceof BlockedAddressError ? err.message : `Could not resolve the host: ${(err as Error).message}`, latencyMs: latency() }
  }
  const checkedLookup = ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, addresses)
    else callback(null, addresses[0]!.address, addresses[0]!.family)
  }) as unknown as LookupFunction
  const { http, https } = httpModules()
  const client = url.protocol === 'https:' ? https : http
  return new Promise<Outcome>((resolve) => {
    const req = client.request(url, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'growthdesk-webhooks' },
      lookup: checkedLookup,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    }, (res) => {
      let excerpt = ''
      const done = () => {
        const status = res.statusCode ?? 0
        const ok = status >= 200 && status < 300
        const retryAfter = status === 429 || status === 503 ? res.headers['retry-after'] : undefined
        resolve({ ok, statusCode: status, error: ok ? null : (excerpt || `HTTP ${status}`).slice(0, EXCERPT), latencyMs: latency(), ...(retryAfter !== undefined ? { retryAfter } : {}) })
      }
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        if (excerpt.length < EXCERPT) excerpt += chunk.slice(0, EXCERPT - excerpt.length)
        else {
          res.destroy()
          done()
        }
      })
      res.on('end', done)
      res.on('error', done)
    })
    req.on('error', (err) => resolve({ ok: false, statusCode: null, error: (err.name === 'AbortError' || err.name === 'TimeoutError' ? `No answer within ${DELIVERY_TIMEOUT_MS / 1000} s.` : err.message).slice(0, EXCERPT), latencyMs: latency() }))
    req.end(body)
  })
}

async function webhooksPlugin(app: FastifyInstance, options: WebhooksPluginOptions) {
  const { policy } = options

  // Outcomes are recorded in groups: one statement for every outcome that finished while the
  // previous group was being written (a group commit), so a busy worker writes a few statements
  // a second instead of a transaction per message, and an idle one records each at once.
  let queued: { outcome: DeliveryOutcome; done: (err?: unknown) => void }[] = []
  let writing = false
  async function writeOutcomes(): Promise<void> {
    writing = true
    while (queued.length > 0) {
      const group = queued
      queued = []
      try {
        await app.repos.webhooks.finish(group.map((g) => g.outcome), app.now(), FAILING_AFTER)
        for (const g of group) g.done()
      } catch (err) {
        for (const g of group) g.done(err)
      }
    }
    writing = false
  }
  function record(outcome: DeliveryOutcome): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      queued.push({ outcome, done: (err) => (err === undefined ? resolve() : reject(err)) })
      if (!writing) void writeOutcomes()
    })
  }

  async function deliver(d: ClaimedDelivery): Promise<void> {
    const now = app.now()
    const timestamp = Math.floor(now.getTime() / 1000)
    // A Slack subscription gets Slack's message shape; the Standard Webhooks headers go too (Slack ignores them).
    const body = JSON.stringify(d.format === 'slack' ? slackMessage(d.payload as Envelope) : d.payload)
    const headers = {
      'webhook-id': d.id,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': d.unreadable ? '' : signatureHeader(d, d.id, timestamp, body, now),
    }
    // Secrets this instance cannot open (a server key it lacks): the attempt fails, nothing is sent unsigned.
    const outcome = d.unreadable ? { ok: false, statusCode: null, error: d.unreadable, latencyMs: 0 } : await post(d, body, headers, policy)
    // Standard Webhooks: 410 Gone is never tried again and disables the endpoint (enabled again
    // by hand); a 429's or 503's Retry-After puts the next attempt no sooner than it asks.
    const gone = outcome.statusCode === 410
    let retryAt = outcome.ok || gone ? null : nextAttemptAt(d.attempts, app.now())
    const wait = retryAfterMs(outcome.retryAfter, app.now())
    if (retryAt && wait !== undefined) retryAt = new Date(Math.max(retryAt.getTime(), app.now().getTime() + wait))
    const { retryAfter: _, ...result } = outcome
    await record({ id: d.id, webhookId: d.webhookId, ...result, retryAt, gone })
    if (!outcome.ok) app.log.warn({ webhook: d.webhookId, delivery: d.id, attempts: d.attempts, status: outcome.statusCode }, 'webhook delivery failed')
  }

  async function deliverDue(): Promise<number> {
    const now = app.now()
    const claimed = await app.repos.webhooks.claim(now, new Date(now.getTime() + LEASE_MS), BATCH)
    await Promise.all(claimed.map((d) => deliver(d).catch((err) => app.log.error({ err, delivery: d.id }, 'webhook delivery could not be recorded'))))
    return claimed.length
  }

  app.decorate('webhooks', { deliverDue })
  if (!options.enabled) return

  // Every interval, and at once when a commit that queued messages NOTIFYs (the interval
  // remains for retries falling due, and for a listener that lost its connection).
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined
  let stopped = false
  let woken = false
  const isStopped = () => stopped
  const tick = () => {
    clearTimeout(timer)
    running = (async () => {
      // A full batch: more may be due at once.
      for (;;) {
        if ((await deliverDue()) < BATCH || isStopped()) break
      }
    })()
      .catch((err) => app.log.error({ err }, 'webhook worker'))
      .finally(() => {
        running = undefined
        if (stopped) return
        if (woken) {
          woken = false
          tick()
        } else timer = setTimeout(tick, options.intervalMs ?? 250).unref()
      })
  }
  const wake = () => {
    if (stopped) return
    if (running) woken = true
    else tick()
  }
  let unlisten: (() => Promise<void>) | undefined
  app.addHook('onReady', async () => {
    // Listening (`up`) wakes it, at start and after a lost connection: a NOTIFY may have been missed.
    unlisten = await app.database.listen(WEBHOOKS_CHANNEL, { notify: wake, up: wake, down: () => {} })
  })
  // Before the database closes (hooks run in reverse order of registration).
  app.addHook('onClose', async () => {
    stopped = true
    clearTimeout(timer)
    await unlisten?.()
    await running
  })
}

export default fp(webhooksPlugin, { name: 'webhooks', dependencies: ['repositories', 'registry'] })
