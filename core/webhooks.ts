// Outgoing webhooks, the policy: which URLs may be subscribed, which addresses may be reached,
// how a message is signed (Standard Webhooks), and when a failed message is tried again.
import { createHmac, randomBytes } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { appError } from './errors.ts'
import { isPrivateAddress } from './addresses.ts'

/** What the operations and the worker need to know of the configuration. */
export interface WebhookPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_NETWORKS: private, loopback and link-local targets allowed (tests, local use). */
  allowPrivateNetworks: boolean
  /** Config.production (NODE_ENV=production): http:// is refused even for loopback. */
  production: boolean
}

/** For a registry built without the configuration's policy: the strictest one. */
export const defaultWebhookPolicy: WebhookPolicy = { allowPrivateNetworks: false, production: true }

const isLoopbackHost = (host: string) => host === 'localhost' || host.endsWith('.localhost') || /^127\./.test(host) || host === '[::1]'

/** A subscribable URL, or InvalidArguments saying why not (`path`: the argument's name). */
export function checkWebhookUrl(raw: string, policy: WebhookPolicy, path = 'url'): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw appError('InvalidArguments', `'${raw}' is not an absolute URL.`, [{ path, message: 'must be an absolute https:// URL' }])
  }
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname) && !policy.production
  if (url.protocol !== 'https:' && !loopbackHttp) {
    throw appError('InvalidArguments', 'A webhook URL must use https:// (http:// only for a loopback address in development).', [{ path, message: 'must use https://' }])
  }
  if (url.username || url.password) {
    throw appError('InvalidArguments', 'A webhook URL must not carry a user name or password.', [{ path, message: 'must not contain credentials' }])
  }
  return url
}

export class BlockedAddressError extends Error {
  override name = 'BlockedAddressError'
}

/** The addresses of the URL's host, all of them public unless the policy allows private ones; else BlockedAddressError. */
export async function resolvePublic(url: URL, policy: WebhookPolicy): Promise<{ address: string; family: number }[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true, verbatim: true })
  if (addresses.length === 0) throw new BlockedAddressError(`${host} has no address.`)
  if (!policy.allowPrivateNetworks) {
    const bad = addresses.find((a) => isPrivateAddress(a.address))
    if (bad) throw new BlockedAddressError(`${host} resolves to ${bad.address}, a private, loopback or link-local address (WEBHOOKS_ALLOW_PRIVATE_NETWORKS is off).`)
  }
  return addresses
}

/** The check at create and update: a clear 400 for an address that may not be reached or a host that does not resolve. */
export async function checkWebhookTarget(raw: string, policy: WebhookPolicy): Promise<string> {
  const url = checkWebhookUrl(raw, policy)
  try {
    await resolvePublic(url, policy)
  } catch (err) {
    const message = err instanceof BlockedAddressError ? err.message : `${url.hostname} could not be resolved.`
    throw appError('InvalidArguments', `The webhook URL cannot be used: ${message}`, [{ path: 'url', message: 'must resolve to a public address' }])
  }
  return url.toString()
}

/** A new signing secret in the standard's form: whsec_ and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`
}

/** `v1,<base64 HMAC-SHA256 of id.timestamp.body>` with the base64-decoded key after whsec_. */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`
}

/** The webhook-signature header: the current secret's signature, and the previous one's while it still signs. */
export function signatureHeader(
  w: { secret: string; previousSecret: string | null; previousSecretUntil: Date | null },
  id: string,
  timestamp: number,
  body: string,
  now: Date
): string {
  const signatures = [signature(w.secret, id, timestamp, body)]
  if (w.previousSecret && w.previousSecretUntil && w.previousSecretUntil > now) signatures.push(signature(w.previousSecret, id, timestamp, body))
  return signatures.join(' ')
}

/** How long the old secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000

/**
 * Seconds to wait after the n-th failed attempt (n from 1): 5 s, 30 s, 2 min, 10 min, 30 min,
 * 1 h, 2 h, 4 h, then 6 h; 13 attempts span about 31 h (with jitter, never under 24 h).
 */
export const RETRY_DELAYS_S = [5, 30, 120, 600, 1800, 3600, 7200, 14400, 21600, 21600, 21600, 21600]
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1
/** Consecutive failed attempts after which an endpoint is marked failing. */
export const FAILING_AFTER = 5

/** When to try again after the `attempts`-th failed attempt, or null when that was the last (±20 % jitter). */
export function nextAttemptAt(attempts: number, now: Date, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_S[attempts - 1]
  if (delay === undefined) return null
  return new Date(now.getTime() + delay * 1000 * (0.8 + 0.4 * random()))
}
