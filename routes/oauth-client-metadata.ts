// OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP
// 2025-11-25 registration of choice): a client names itself by an HTTPS URL as `client_id`; the
// document at that URL is fetched (size and time limited), validated, cached, and stored as an
// oauth_clients row whose id is the URL, so grants and tokens work as for registered clients.
// The fetch refuses private, loopback and link-local addresses (the server must not become a
// probe of its own network) unless OAUTH_CLIENT_METADATA_PRIVATE_NETWORK=true, which also
// allows http:// URLs (tests and local development without TLS).
import { lookup } from 'node:dns'
import { isIP } from 'node:net'
import { isPrivateAddress } from '../core/addresses.ts'
import type { FastifyInstance } from 'fastify'
import type { OAuthClient } from '../db/repositories/oauth.ts'
import { acceptableRedirectUri, hasControlCharacters } from './oauth.ts'

// Not `import http from 'node:http'`: an ES import of node:http builds its namespace from every
// export, and reading `WebSocket` and its kin loads Node's fetch implementation (undici) at start
// (about 75 ms and 12 MB), which nothing here uses. getBuiltinModule returns the plain module.
const http = process.getBuiltinModule('node:http')
const https = process.getBuiltinModule('node:https')

export const METADATA_MAX_BYTES = 16 * 1024
export const METADATA_TIMEOUT_MS = 5_000
const CACHE_DEFAULT_S = 300
const CACHE_MAX_S = 24 * 3600
const CACHE_MAX_ENTRIES = 1000

/** Whether `client_id` is a metadata-document URL rather than a registered id. */
export const isMetadataUrl = (clientId: string) => /^https?:\/\//i.test(clientId)

export class ClientMetadataError extends Error {}

export interface ClientMetadataOptions {
  /** OAUTH_CLIENT_METADATA_PRIVATE_NETWORK: allow private/loopback addresses and http:// URLs. */
  privateNetwork: boolean
  /** The deadline of a whole fetch: DNS, connect, headers and body (METADATA_TIMEOUT_MS; tests shorten it). */
  timeoutMs?: number
}

/**
 * GET with a pinned, checked DNS answer, a byte limit and a deadline for the whole exchange: a
 * server that answers a byte at a time never trips an idle timeout, so the deadline runs from
 * the start to the last byte of the body.
 */
function fetchDocument(url: URL, privateNetwork: boolean, timeoutMs: number): Promise<{ body: string; maxAge: number | undefined }> {
  return new Promise((resolve, reject) => {
    const deadline = AbortSignal.timeout(timeoutMs)
    const late = () => `The client metadata document did not arrive within ${timeoutMs} ms.`
    const fail = (message: string) => reject(new ClientMetadataError(deadline.aborted ? late() : message))
    // The answer at the deadline, whatever the request and its response report as they are torn down.
    deadline.addEventListener('abort', () => fail(late()), { once: true })
    const checkedLookup: typeof lookup = ((hostname: string, options: object, callback: (err: Error | null, address: string | { address: string; family: number }[], family?: number) => void) => {
      lookup(hostname, { ...options, all: true }, (err, addresses) => {
        if (err) return callback(err, '', 0)
        const list = addresses as { address: string; family: number }[]
        if (!privateNetwork && list.some((a) => isPrivateAddress(a.address))) return callback(new ClientMetadataError(`${hostname} resolves to a private or loopback address.`), '', 0)
        if ((options as { all?: boolean }).all) return callback(null, list)
        callback(null, list[0]!.address, list[0]!.family)
      })
    }) as typeof lookup
    if (!privateNetwork && isIP(url.hostname.replace(/^\[|\]$/g, '')) && isPrivateAddress(url.hostname.replace(/^\[|\]$/g, ''))) return fail('The client_id URL names a private or loopback address.')
    const client = url.protocol === 'https:' ? https : http
    // `signal` aborts the request and its response at the deadline, whichever phase it is in.
    const req = client.get(url, { lookup: checkedLookup, headers: { accept: 'application/json' }, timeout: timeoutMs, signal: deadline }, (res) => {
      if (res.statusCode !== 200) {
        res.resume()
        return fail(`The client metadata document answered HTTP ${res.statusCode}.`)
      }
      const declared = Number(res.headers['content-length'] ?? 0)
      if (declared > METADATA_MAX_BYTES) {
        res.destroy()
        return fail(`The client metadata document is larger than ${METADATA_MAX_BYTES} bytes.`)
      }
      const chunks: Buffer[] = []
      let size = 0
      res.on('data', (c: Buffer) => {
        size += c.length
        if (size > METADATA_MAX_BYTES) {
          res.destroy()
          fail(`The client metadata document is larger than ${METADATA_MAX_BYTES} bytes.`)
        } else chunks.push(c)
      })
      res.on('end', () => {
        const maxAge = /max-age=(\d+)/.exec(String(res.headers['cache-control'] ?? ''))?.[1]
        resolve({ body: Buffer.concat(chunks).toString('utf8'), maxAge: maxAge === undefined ? undefined : Number(maxAge) })
      })
      res.on('error', (err) => fail(`Reading the client metadata document failed: ${err.message}`))
    })
    req.on('timeout', () => req.destroy(new ClientMetadataError(late())))
    req.on('error', (err) => fail(err instanceof ClientMetadataError ? err.message : `Fetching the client metadata document failed: ${err.message}`))
  })
}

/** The document's fields we use, validated; throws ClientMetadataError naming the problem. */
export function validateDocument(clientId: string, doc: unknown): { name: string; redirectUris: string[] } {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) throw new ClientMetadataError('The client metadata document is not a JSON object.')
  const d = doc as Record<string, unknown>
  if (d.client_id !== clientId) throw new ClientMetadataError('The client metadata document\'s client_id is not the URL it was fetched from.')
  const uris = d.redirect_uris
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === 'string' && u.length <= 2048 && acceptableRedirectUri(u))) {
    throw new ClientMetadataError('redirect_uris must list 1–10 https, loopback http or app-scheme URIs without a fragment.')
  }
  const method = d.token_endpoint_auth_method ?? 'none'
  if (method !== 'none') throw new ClientMetadataError('A metadata-document client is a public client: token_endpoint_auth_method must be none.')
  for (const key of ['client_secret', 'client_secret_expires_at']) if (key in d) throw new ClientMetadataError(`A client metadata document must not contain ${key}.`)
  const grantTypes = d.grant_types ?? ['authorization_code']
  if (!Array.isArray(grantTypes) || !grantTypes.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
    throw new ClientMetadataError('grant_types may contain authorization_code and refresh_token only.')
  }
  if (typeof d.client_name === 'string' && hasControlCharacters(d.client_name)) throw new ClientMetadataError('client_name must not contain control characters (such as NUL).')
  const name = typeof d.client_name === 'string' && d.client_name.trim() ? d.client_name.trim().slice(0, 200) : new URL(clientId).host
  return { name, redirectUris: uris as string[] }
}

/** Resolves `client_id` values: registered ids from the database, URLs through their document. */
export function clientResolver(app: FastifyInstance, options: ClientMetadataOptions) {
  const cache = new Map<string, { client: OAuthClient; until: number }>()

  async function fromDocument(clientId: string): Promise<OAuthClient> {
    let url: URL
    try {
      // The URL parser would strip or percent-encode controls; the client_id is stored as sent.
      if (hasControlCharacters(clientId) || clientId.includes(' ')) throw new TypeError('not a URL')
      url = new URL(clientId)
    } catch {
      throw new ClientMetadataError('The client_id is not a valid URL.')
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.privateNetwork)) throw new ClientMetadataError('A client_id URL must use https.')
    if (url.hash || url.username || url.password || url.pathname === '/' || clientId.length > 2048) {
      throw new ClientMetadataError('A client_id URL must have a path and no fragment or credentials.')
    }
    const { body, maxAge } = await fetchDocument(url, options.privateNetwork, options.timeoutMs ?? METADATA_TIMEOUT_MS)
    let doc: unknown
    try {
      doc = JSON.parse(body)
    } catch {
      throw new ClientMetadataError('The client metadata document is not valid JSON.')
    }
    const { name, redirectUris } = validateDocument(clientId, doc)
    const client = await app.repos.oauth.upsertMetadataClient({ id: clientId, name, redirectUris, now: app.now() })
    if (cache.size >= CACHE_MAX_ENTRIES) cache.delete(cache.keys().next().value!)
    const seconds = Math.min(Math.max(maxAge ?? CACHE_DEFAULT_S, 0), CACHE_MAX_S)
    cache.set(clientId, { client, until: Date.now() + seconds * 1000 })
    return client
  }

  return async function resolve(clientId: string | undefined): Promise<OAuthClient | { error: string } | undefined> {
    if (!clientId) return undefined
    if (!isMetadataUrl(clientId)) return app.repos.oauth.client(clientId)
    const hit = cache.get(clientId)
    if (hit && hit.until > Date.now()) return hit.client
    try {
      return await fromDocument(clientId)
    } catch (err) {
      if (err instanceof ClientMetadataError) return { error: err.message }
      throw err
    }
  }
}
