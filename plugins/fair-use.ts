// Fair use: per-credential request limits on every authenticated surface (REST, tools, MCP;
// ingestion counted per event batch, in a bucket of its own), a lower per-address limit on failed
// authentication, and the per-route limits of the console and OAuth endpoints — all counted in
// core/fair-use.ts's windows, shared by the instances on one PostgreSQL database.
//
// Headers follow the IETF draft (draft-ietf-httpapi-ratelimit-headers, the names
// @fastify/rate-limit sends with `enableDraftSpec`): RateLimit-Limit, RateLimit-Remaining,
// RateLimit-Reset (seconds) and RateLimit-Policy on every authenticated response, Retry-After on a 429.
import fp from 'fastify-plugin'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { RateLimits } from '../config.ts'
import { appError } from '../core/errors.ts'
import { rateLimitStore, SharedCounters, type WindowCount } from '../core/fair-use.ts'

/** Which bucket a surface's requests count in. */
export type Bucket = 'requests' | 'ingest'

export interface FairUse {
  /** The counters (tests flush them to see another instance's counts). */
  counters: SharedCounters
  /**
   * Whether the client's address has failed authentication too often in the current window.
   * Such an address is not turned away outright (one bad client behind a NAT would lock out
   * everyone behind it): its credentials are still checked, and only a failure is refused.
   */
  addressOverLimit(request: FastifyRequest): boolean
  /** Throws a 429 when the client's address has failed authentication too often. */
  checkAddress(request: FastifyRequest, reply: FastifyReply): void
  /** Counts a failed authentication of the client's address. */
  authFailed(request: FastifyRequest): Promise<void>
  /**
   * Rejects with a 429 when the credential is already over its limit (before it is looked up);
   * undefined when it is not (no promise to wait for on the way in).
   */
  checkCredential(request: FastifyRequest, reply: FastifyReply, credential: string, bucket: Bucket): Promise<never> | undefined
  /** Counts the request against the credential; sets the RateLimit headers; throws a 429 when over. */
  charge(request: FastifyRequest, reply: FastifyReply, credential: string, bucket: Bucket): Promise<void>
  /**
   * Holds one of the credential's concurrent slots on this instance until the response ends;
   * rejects with a 429 when all are taken (one key cannot occupy every database connection).
   */
  enter(request: FastifyRequest, reply: FastifyReply, credential: string): Promise<never> | undefined
  /** How a late refusal waits (a timer; tests put a gate of their own). */
  sleep(ms: number): Promise<void>
}

declare module 'fastify' {
  interface FastifyInstance {
    fairUse: FairUse
  }
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

/** Refusals of one credential answered at once in a window; those past it wait REFUSAL_DELAY_MS. */
export const REFUSALS_BEFORE_DELAY = 10
export const REFUSAL_DELAY_MS = 1000
/** Credentials whose refusals are counted at most (a flood of made-up keys cannot grow it past this). */
const MAX_REFUSING = 10_000

async function fairUsePlugin(app: FastifyInstance, options: { limits?: RateLimits }) {
  const limits = options.limits
  const counters = new SharedCounters(app.database.kind === 'postgres' ? app.repos.rateLimits : undefined, {
    // The configured windows and the per-route ones (at most 5 minutes, routes/console and oauth).
    longestWindowMs: Math.max(limits?.windowMs ?? 0, limits?.authFailureWindowMs ?? 0, 5 * 60_000),
    onError: (err) => app.log.warn({ err }, 'could not share rate-limit counters'),
    // Windows on the app's clock (app.now, which tests pin), as every other time here.
    now: () => app.now().getTime(),
  })
  app.addHook('onReady', async () => counters.start())
  app.addHook('onClose', async () => counters.close())

  // The per-route limits (`config.rateLimit` on a route) count in the same shared windows.
  await app.register(rateLimit, { global: false, enableDraftSpec: true, store: rateLimitStore(counters) })

  const bucketOf = (bucket: Bucket) =>
    limits && (bucket === 'ingest' ? limits.ingestMax : limits.max) > 0
      ? { max: bucket === 'ingest' ? limits.ingestMax : limits.max, windowMs: limits.windowMs, prefix: bucket === 'ingest' ? 'i:' : 'k:' }
      : undefined

  function headers(reply: FastifyReply, max: number, windowMs: number, count: WindowCount) {
    reply.header('ratelimit-limit', max)
    reply.header('ratelimit-remaining', Math.max(0, max - count.current))
    reply.header('ratelimit-reset', seconds(count.ttl))
    reply.header('ratelimit-policy', `${max};w=${windowMs / 1000}`)
  }

  function tooMany(reply: FastifyReply, ttl: number, message: string): never {
    reply.header('retry-after', seconds(ttl))
    throw appError('RateLimited', `${message} Retry in ${seconds(ttl)} s.`)
  }

  const inFlight = new Map<string, number>()

  // A credential that keeps sending after its refusals gets them late: past the first
  // REFUSALS_BEFORE_DELAY of a window (per limit window, or per second for concurrency), each 429
  // is sent after REFUSAL_DELAY_MS (never past the window's end). A client waits for its answer
  // before it sends again on that connection, so a flood of 64 keep-alive connections comes down
  // from thousands of refusals a second — which kept the one event loop busy, and a neighbour's
  // requests waiting behind them (×6–21 its median) — to 64 a second; a waiting refusal costs a
  // timer. The answer itself is unchanged (status, body, Retry-After).
  const refusals = new Map<string, { until: number; count: number }>()
  const refuse = (reply: FastifyReply, credential: string, ttl: number, message: string): Promise<never> | undefined => {
    const now = Date.now()
    let entry = refusals.get(credential)
    if (!entry || entry.until <= now) {
      if (refusals.size >= MAX_REFUSING) refusals.clear() // a bound, not a policy: counting starts over
      entry = { until: now + Math.max(ttl, 1000), count: 0 }
      refusals.set(credential, entry)
    }
    if (++entry.count <= REFUSALS_BEFORE_DELAY) tooMany(reply, ttl, message)
    const wait = Math.min(REFUSAL_DELAY_MS, ttl)
    return fairUse.sleep(wait).then(() => tooMany(reply, ttl - wait, message))
  }

  const addressKey = (request: FastifyRequest) => `f:${rateLimit.normalizeIP(request.ip)}`

  const fairUse: FairUse = {
    counters,

    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),

    addressOverLimit(request) {
      if (!limits || limits.authFailures === 0) return false
      return counters.peek(addressKey(request), limits.authFailureWindowMs).current >= limits.authFailures
    },

    checkAddress(request, reply) {
      if (!limits || limits.authFailures === 0) return
      const count = counters.peek(addressKey(request), limits.authFailureWindowMs)
      if (count.current >= limits.authFailures) {
        tooMany(reply, count.ttl, `Too many failed authentications from this address (at most ${limits.authFailures} every ${limits.authFailureWindowMs / 1000} s); this credential is not accepted. A valid credential is still served.`)
      }
    },

    async authFailed(request) {
      if (!limits || limits.authFailures === 0) return
      await counters.hit(addressKey(request), limits.authFailureWindowMs)
    },

    checkCredential(_request, reply, credential, bucket) {
      const b = bucketOf(bucket)
      if (!b) return
      const count = counters.peek(b.prefix + credential, b.windowMs)
      if (count.current < b.max) return undefined
      headers(reply, b.max, b.windowMs, { current: count.current + 1, ttl: count.ttl })
      return refuse(reply, b.prefix + credential, count.ttl, limitMessage(bucket, b.max, b.windowMs))
    },

    async charge(_request, reply, credential, bucket) {
      const b = bucketOf(bucket)
      if (!b) return
      const count = await counters.hit(b.prefix + credential, b.windowMs)
      headers(reply, b.max, b.windowMs, count)
      if (count.current > b.max) tooMany(reply, count.ttl, limitMessage(bucket, b.max, b.windowMs))
    },

    enter(_request, reply, credential) {
      const limit = limits?.concurrency ?? 0
      if (limit === 0) return undefined
      const busy = inFlight.get(credential) ?? 0
      if (busy >= limit) return refuse(reply, `c:${credential}`, 1000, `Too many concurrent requests with this credential: at most ${limit} at a time.`)
      inFlight.set(credential, busy + 1)
      reply.raw.once('close', () => {
        const left = (inFlight.get(credential) ?? 1) - 1
        if (left === 0) inFlight.delete(credential)
        else inFlight.set(credential, left)
      })
      return undefined
    },
  }
  app.decorate('fairUse', fairUse)
}

function limitMessage(bucket: Bucket, max: number, windowMs: number): string {
  const what = bucket === 'ingest' ? 'event batches' : 'requests'
  return `Too many ${what} with this credential: at most ${max} ${what} every ${windowMs / 1000} s.`
}

export default fp(fairUsePlugin, { name: 'fair-use', dependencies: ['database', 'repositories'] })
