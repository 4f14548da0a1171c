// Outgoing webhooks, the policy: which URLs may be subscribed, which addresses may be reached,
// how a message is signed (Standard Webhooks), and when a failed message is tried again.
import { createHmac, createPrivateKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { appError } from './errors.ts'
import { isPrivateAddress } from './addresses.ts'

/** What the operations and the worker need to know of the configuration. */
export interface WebhookPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_NETWORKS: private, loopback and link-local targets allowed (tests, local use). */
  allowPrivateNetworks: boolean
  /** Config.production (NODE_ENV=production): without allowPrivateNetworks, http:// is refused even for loopback. */
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
  // http:// reaches only what WEBHOOKS_ALLOW_PRIVATE_NETWORKS lets be reached: with it, any host
  // (an internal receiver on a private network, production included; its address is checked at
  // subscription and at every delivery, and a public one is refused below); without it, loopback
  // outside production (which resolvePublic refuses anyway: local development only).
  const plainHttpOk = url.protocol === 'http:' && (policy.allowPrivateNetworks || (isLoopbackHost(url.hostname) && !policy.production))
  if (url.protocol !== 'https:' && !plainHttpOk) {
    throw appError('InvalidArguments', 'A webhook URL must use https:// (http:// only to a private-network address, with WEBHOOKS_ALLOW_PRIVATE_NETWORKS=true).', [{ path, message: 'must use https://' }])
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
  // Plain http:// goes only to private networks: a public address would carry the messages unencrypted over the internet.
  if (url.protocol === 'http:') {
    const open = addresses.find((a) => !isPrivateAddress(a.address))
    if (open) throw new BlockedAddressError(`${host} resolves to ${open.address}, a public address: http:// is for private networks only, use https://.`)
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
    throw appError('InvalidArguments', `The webhook URL cannot be used: ${message}`, [{ path: 'url', message: url.protocol === 'http:' ? 'http:// must resolve to a private-network address' : 'must resolve to a public address' }])
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

/** The signature schemes of Standard Webhooks: v1 (HMAC-SHA256, whsec_), v1a (ed25519, whsk_/whpk_). */
export const signatureSchemes = ['v1', 'v1a'] as const
export type SignatureScheme = (typeof signatureSchemes)[number]

/**
 * A new ed25519 key pair in the standard's serialization: `whsk_` and base64 of the 64-byte
 * secret key (seed then public key, as libsodium and the standard's libraries hold it), `whpk_`
 * and base64 of the raw 32-byte public key.
 */
export function newSigningKeyPair(): { signingKey: string; publicKey: string } {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' })
  const seed = Buffer.from(jwk.d!, 'base64url')
  const pub = Buffer.from(jwk.x!, 'base64url')
  return { signingKey: `whsk_${Buffer.concat([seed, pub]).toString('base64')}`, publicKey: `whpk_${pub.toString('base64')}` }
}

/** `v1a,<base64 ed25519 signature of id.timestamp.body>` with a whsk_ key. */
export function asymmetricSignature(signingKey: string, id: string, timestamp: number, body: string): string {
  const raw = Buffer.from(signingKey.replace(/^whsk_/, ''), 'base64')
  const key = createPrivateKey({ format: 'jwk', key: { kty: 'OKP', crv: 'Ed25519', d: raw.subarray(0, 32).toString('base64url'), x: raw.subarray(32, 64).toString('base64url') } })
  return `v1a,${sign(null, Buffer.from(`${id}.${timestamp}.${body}`), key).toString('base64')}`
}

/**
 * The webhook-signature header, space-separated: with v1, the current secret's signature and the
 * previous one's while it still signs; with v1a, the ed25519 signature.
 */
export function signatureHeader(
  w: { secret: string; previousSecret: string | null; previousSecretUntil: Date | null; schemes?: readonly string[]; signingKey?: string | null },
  id: string,
  timestamp: number,
  body: string,
  now: Date
): string {
  const schemes = w.schemes ?? ['v1']
  const signatures: string[] = []
  if (schemes.includes('v1')) {
    signatures.push(signature(w.secret, id, timestamp, body))
    if (w.previousSecret && w.previousSecretUntil && w.previousSecretUntil > now) signatures.push(signature(w.previousSecret, id, timestamp, body))
  }
  if (schemes.includes('v1a') && w.signingKey) signatures.push(asymmetricSignature(w.signingKey, id, timestamp, body))
  return signatures.join(' ')
}

/** How long the old secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3600_000

/**
 * Seconds to wait after the n-th failed attempt (n from 1): Standard Webhooks' example schedule
 * (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h) and one more day: 11 attempts over about
 * 99.6 h, so that even with the -20 % jitter the last one comes more than 3 days (79.7 h) after the first.
 */
export const RETRY_DELAYS_S = [5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400, 86400]
export const MAX_ATTEMPTS = RETRY_DELAYS_S.length + 1
/** Consecutive failed attempts after which an endpoint is marked failing. */
export const FAILING_AFTER = 5

/** When to try again after the `attempts`-th failed attempt, or null when that was the last (±20 % jitter). */
export function nextAttemptAt(attempts: number, now: Date, random: () => number = Math.random): Date | null {
  const delay = RETRY_DELAYS_S[attempts - 1]
  if (delay === undefined) return null
  return new Date(now.getTime() + delay * 1000 * (0.8 + 0.4 * random()))
}
