// The OAuth 2.1 endpoints MCP clients call without a browser: dynamic client registration
// (RFC 7591), the token endpoint (authorization code + PKCE S256, rotating refresh tokens)
// and revocation (RFC 7009). They answer in OAuth's own error format ({error,
// error_description}), which OAuth clients parse, rather than the API's.
// The browser part (/oauth/authorize with sign-in and consent) lives with the console.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import formbody from '@fastify/formbody'
import { hashKey } from '../db/keys.ts'
import type { OAuthClient } from '../db/repositories/oauth.ts'
import { SCOPES } from './oauth-metadata.ts'
import { isLoopbackHost } from '../core/origins.ts'
import { ClientRegistration, oauthBodyErrors, oauthErrorResponse, RevocationResponse, TokenResponse } from '../schemas/oauth.ts'

type Params = Record<string, unknown>

const oauthError = (reply: FastifyReply, status: number, error: string, description: string) =>
  reply.code(status).header('cache-control', 'no-store').send({ error, error_description: description })

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 2048 ? v : undefined)

/**
 * Control characters (C0 and DEL): no URI contains them, no name needs them, and PostgreSQL
 * text cannot hold a NUL (a 500 if one reached an INSERT).
 */
export function hasControlCharacters(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x20 || c === 0x7f) return true
  }
  return false
}

/** Redirect URIs a client may register: https, loopback http, or a native app's own scheme. */
export function acceptableRedirectUri(uri: string): boolean {
  // The URL parser would strip leading controls and percent-encode others: the URI itself must be clean.
  if (hasControlCharacters(uri) || uri.includes(' ')) return false
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return false
  }
  if (url.hash) return false
  if (url.protocol === 'https:') return true
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname)
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) && !['javascript:', 'data:', 'file:', 'vbscript:'].includes(url.protocol)
}

/** A PKCE code_verifier or S256 code_challenge: 43–128 unreserved characters (RFC 7636). */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/

export function pkceS256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

const oauthRoutes: FastifyPluginAsync<{ publicUrl: string }> = async (app, { publicUrl }) => {
  const resource = `${publicUrl}/mcp`
  await app.register(formbody)
  // An OAuth client reads OAuth error bodies (RFC 6749 §5.2), also when it is slowed down or
  // its body does not parse (not JSON, nested too deep, too large, an unknown media type);
  // anything else (a 5xx) goes on to the app's error handler.
  app.setErrorHandler(async (error: Error & { statusCode?: number }, _request, reply) => {
    if (error.statusCode === 429) return oauthError(reply, 429, 'slow_down', 'Too many requests to this endpoint; wait a minute and try again.')
    if (error.statusCode === undefined || error.statusCode < 400 || error.statusCode >= 500) throw error
    const description = error.statusCode === 415
      ? 'Send the parameters as application/x-www-form-urlencoded (or JSON).'
      : error.statusCode === 413 ? 'The request body is too large.' : 'The request body could not be read: send form-encoded parameters (or a JSON object).'
    return oauthError(reply, error.statusCode, 'invalid_request', description)
  })
  const limited = { rateLimit: { max: 60, timeWindow: '1 minute' } }

  /** Client authentication at the token and revocation endpoints. */
  async function authenticateClient(request: FastifyRequest, body: Params): Promise<OAuthClient | string> {
    let clientId = str(body.client_id)
    let secret = str(body.client_secret)
    const basic = /^Basic\s+(\S+)$/i.exec(request.headers.authorization ?? '')
    if (basic) {
      const [id, pass] = Buffer.from(basic[1]!, 'base64').toString('utf8').split(':')
      try {
        clientId = decodeURIComponent(id ?? '')
        secret = decodeURIComponent(pass ?? '')
      } catch {
        return 'The Basic credentials are not valid form-encoding (RFC 6749 §2.3.1).'
      }
    }
    if (!clientId) return 'client_id is required.'
    const client = await app.repos.oauth.client(clientId)
    if (!client) return 'The client is unknown.'
    if (client.authMethod !== 'none') {
      const expected = Buffer.from(client.secretHash ?? '', 'hex')
      const actual = Buffer.from(hashKey(secret ?? ''), 'hex')
      if (!secret || expected.length !== actual.length || !timingSafeEqual(expected, actual)) return 'The client secret is wrong.'
    }
    return client
  }

  app.post('/oauth/register', {
    config: { rateLimit: { max: 20, timeWindow: '1 minute' } },
    schema: {
      tags: ['oauth'],
      summary: 'Dynamic client registration (RFC 7591)',
      response: {
        201: ClientRegistration,
        400: oauthErrorResponse('Unusable client metadata (invalid_redirect_uri, invalid_client_metadata) or an unreadable body (invalid_request).'),
        ...oauthBodyErrors,
      },
    },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Params
    const uris = body.redirect_uris
    if (!Array.isArray(uris) || uris.length === 0 || uris.length > 10 || !uris.every((u) => typeof u === 'string' && u.length <= 2048 && acceptableRedirectUri(u))) {
      return oauthError(reply, 400, 'invalid_redirect_uri', 'redirect_uris must list 1–10 https, loopback http or app-scheme URIs without a fragment, spaces or control characters.')
    }
    const method = body.token_endpoint_auth_method ?? 'none'
    if (method !== 'none' && method !== 'client_secret_post' && method !== 'client_secret_basic') {
      return oauthError(reply, 400, 'invalid_client_metadata', 'token_endpoint_auth_method must be none, client_secret_post or client_secret_basic.')
    }
    const grantTypes = (body.grant_types as unknown[] | undefined) ?? ['authorization_code', 'refresh_token']
    if (!Array.isArray(grantTypes) || !grantTypes.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
      return oauthError(reply, 400, 'invalid_client_metadata', 'grant_types may contain authorization_code and refresh_token only.')
    }
    if (typeof body.client_name === 'string' && hasControlCharacters(body.client_name)) {
      return oauthError(reply, 400, 'invalid_client_metadata', 'client_name must not contain control characters (such as NUL).')
    }
    const name = (str(body.client_name) ?? 'Unnamed client').slice(0, 200)
    const { client, secret } = await app.repos.oauth.registerClient({ name, redirectUris: uris as string[], authMethod: method, now: app.now() })
    return reply.code(201).header('cache-control', 'no-store').send({
      client_id: client.id,
      ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
      client_name: client.name,
      redirect_uris: client.redirectUris,
      grant_types: grantTypes,
      response_types: ['code'],
      token_endpoint_auth_method: client.authMethod,
      scope: SCOPES.join(' '),
    })
  })

  app.post('/oauth/token', {
    config: limited,
    schema: {
      tags: ['oauth'],
      summary: 'Token endpoint (authorization_code with PKCE, refresh_token)',
      response: {
        200: TokenResponse,
        400: oauthErrorResponse('A missing or malformed parameter (invalid_request), a code or refresh token that is not valid for this client (invalid_grant), another grant type (unsupported_grant_type) or resource (invalid_target).'),
        401: oauthErrorResponse('The client is unknown or its secret is wrong (invalid_client).'),
        ...oauthBodyErrors,
      },
    },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Params
    const client = await authenticateClient(request, body)
    if (typeof client === 'string') return oauthError(reply, 401, 'invalid_client', client)
    const requested = str(body.resource)
    if (requested !== undefined && requested !== resource) {
      return oauthError(reply, 400, 'invalid_target', `This server issues tokens for ${resource} only.`)
    }
    const now = app.now()
    let outcome
    if (body.grant_type === 'authorization_code') {
      const code = str(body.code)
      const verifier = str(body.code_verifier)
      const redirectUri = str(body.redirect_uri)
      if (!code || !verifier || !redirectUri) return oauthError(reply, 400, 'invalid_request', 'code, code_verifier and redirect_uri are required.')
      if (!PKCE_VALUE.test(verifier)) return oauthError(reply, 400, 'invalid_request', 'code_verifier must be 43–128 unreserved characters.')
      outcome = await app.repos.oauth.redeemCode(code, now, (c) => {
        if (c.clientId !== client.id) return 'The code was issued to another client.'
        if (c.redirectUri !== redirectUri) return 'redirect_uri does not match the authorization request.'
        if (pkceS256(verifier) !== c.codeChallenge) return 'PKCE verification failed: code_verifier does not match code_challenge.'
        if (c.resource !== resource) return 'The code was issued for another resource.'
        return null
      })
    } else if (body.grant_type === 'refresh_token') {
      const token = str(body.refresh_token)
      if (!token) return oauthError(reply, 400, 'invalid_request', 'refresh_token is required.')
      outcome = await app.repos.oauth.refresh(token, client.id, now)
    } else {
      return oauthError(reply, 400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.')
    }
    if ('error' in outcome) return oauthError(reply, 400, 'invalid_grant', outcome.error!)
    return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send({
      access_token: outcome.tokens.accessToken,
      token_type: 'Bearer',
      expires_in: outcome.tokens.expiresIn,
      refresh_token: outcome.tokens.refreshToken,
      scope: outcome.scope,
    })
  })

  app.post('/oauth/revoke', {
    config: limited,
    schema: {
      tags: ['oauth'],
      summary: 'Token revocation (RFC 7009)',
      response: {
        200: RevocationResponse,
        400: oauthErrorResponse('No token, or an unreadable body (invalid_request).'),
        401: oauthErrorResponse('The client is unknown or its secret is wrong (invalid_client).'),
        ...oauthBodyErrors,
      },
    },
  }, async (request, reply) => {
    const body = (request.body ?? {}) as Params
    const client = await authenticateClient(request, body)
    if (typeof client === 'string') return oauthError(reply, 401, 'invalid_client', client)
    const token = str(body.token)
    if (!token) return oauthError(reply, 400, 'invalid_request', 'token is required.')
    await app.repos.oauth.revokeToken(token, client.id, app.now())
    return reply.code(200).header('cache-control', 'no-store').send({})
  })
}

export default oauthRoutes
