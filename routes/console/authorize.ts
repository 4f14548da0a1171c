// OAuth authorization endpoint (browser side): checks the request, signs the user in through
// the console, asks for consent naming the client and what it may do, then redirects back
// with a single-use code (PKCE S256 only; `resource` must be this server's /mcp).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { requireUser } from './session.ts'
import { sessionPrincipal } from '../../core/access.ts'
import { SCOPES } from '../oauth-metadata.ts'
import type { OAuthClient } from '../../db/repositories/oauth.ts'
import { clientResolver } from '../oauth-client-metadata.ts'
import { PKCE_VALUE } from '../oauth.ts'

type Params = Record<string, string | undefined>

const abilities: Record<string, string> = {
  viewer: 'read metrics, the project card and memories',
  reviewer: 'read and review opportunities, read metrics, write memories',
  owner: 'everything a reviewer can, and update the project card',
}

const authorizeRoutes: FastifyPluginAsync<{ publicUrl: string; clientMetadataPrivateNetwork?: boolean; clientMetadataTimeoutMs?: number }> = async (app, { publicUrl, clientMetadataPrivateNetwork, clientMetadataTimeoutMs }) => {
  const resource = `${publicUrl}/mcp`
  // client_id: a registered id, or the HTTPS URL of a Client ID Metadata Document.
  const resolveClient = clientResolver(app, { privateNetwork: clientMetadataPrivateNetwork ?? false, timeoutMs: clientMetadataTimeoutMs })

  type Checked = { client: OAuthClient; redirectUri: string; params: Record<string, string> } | { page: string } | { redirect: string }

  /** RFC 6749 §4.1.2.1: until client and redirect URI are known good, errors are shown, not redirected. */
  async function check(q: Params): Promise<Checked> {
    const client = await resolveClient(q.client_id)
    if (client && 'error' in client) return { page: `The application's client metadata document cannot be used: ${client.error}` }
    if (!client) return { page: 'The application is not registered here (unknown client_id).' }
    const redirectUri = q.redirect_uri ?? (client.redirectUris.length === 1 ? client.redirectUris[0] : undefined)
    if (!redirectUri || !client.redirectUris.includes(redirectUri)) return { page: 'The redirect_uri is not one this application registered.' }
    const back = (error: string, description: string) => {
      const url = new URL(redirectUri)
      url.searchParams.set('error', error)
      url.searchParams.set('error_description', description)
      if (q.state) url.searchParams.set('state', q.state)
      url.searchParams.set('iss', publicUrl)
      return { redirect: url.toString() }
    }
    if (q.response_type !== 'code') return back('unsupported_response_type', 'response_type must be code.')
    if (!q.code_challenge || !PKCE_VALUE.test(q.code_challenge)) return back('invalid_request', 'A PKCE code_challenge is required.')
    if (q.code_challenge_method !== 'S256') return back('invalid_request', 'code_challenge_method must be S256.')
    if (q.resource !== undefined && q.resource !== resource) return back('invalid_target', `resource must be ${resource}.`)
    const params: Record<string, string> = {
      response_type: 'code',
      client_id: client.id,
      redirect_uri: redirectUri,
      code_challenge: q.code_challenge,
      code_challenge_method: 'S256',
      resource,
      scope: SCOPES.join(' '),
      ...(q.state !== undefined ? { state: q.state } : {}),
    }
    return { client, redirectUri, params }
  }

  async function respond(reply: FastifyReply, checked: Exclude<Checked, { client: OAuthClient }>) {
    if ('redirect' in checked) return reply.redirect(checked.redirect)
    reply.code(400)
    return reply.page('error', { title: 'Authorization failed', heading: 'This authorization request cannot be used', message: checked.page })
  }

  const html = (description: string) => ({ description, content: { 'text/html': { schema: { type: 'string' } } } })
  const redirect = (description: string) => ({ type: 'null', description, headers: { Location: { type: 'string', format: 'uri-reference' } } })
  app.get('/oauth/authorize', {
    schema: {
      tags: ['oauth'],
      summary: 'Authorization endpoint: sign-in and consent (browser)',
      response: {
        200: html('The consent page: the client, what it may do, Allow and Deny (after sign-in).'),
        302: redirect("To the console's sign-in page, which comes back here; or to the client's redirect_uri with error, error_description, state and iss."),
        400: html('An error page: the client or its redirect_uri is unknown, so nothing is sent back to it (RFC 6749 §4.1.2.1).'),
      },
    },
  }, async (request, reply) => {
    const checked = await check(request.query as Params)
    if (!('client' in checked)) return respond(reply, checked)
    // Sign in first (the console comes back here), then ask for consent.
    await requireUser.call(app, request, reply)
    if (reply.sent) return reply
    return consent(request, reply, checked.client, checked.params)
  })

  async function consent(request: FastifyRequest, reply: FastifyReply, client: OAuthClient, params: Record<string, string>) {
    const rows = await app.repos.projects.listForUser(sessionPrincipal(request.consoleUser))
    return reply.page('consent', {
      title: `Connect ${client.name}`,
      clientName: client.name,
      resource,
      redirectHost: new URL(params.redirect_uri!).host || params.redirect_uri,
      projects: rows.map((r) => ({ name: r.project.name, role: r.role, can: abilities[r.role] })),
      params,
    })
  }

  app.post('/oauth/authorize', { preHandler: [requireUser, app.csrfProtection], schema: { hide: true } }, async (request, reply) => {
    const body = (request.body ?? {}) as Params
    const checked = await check(body)
    if (!('client' in checked)) return respond(reply, checked)
    const url = new URL(checked.redirectUri)
    if (body.state !== undefined) url.searchParams.set('state', body.state)
    url.searchParams.set('iss', publicUrl)
    if (body.decision !== 'allow') {
      url.searchParams.set('error', 'access_denied')
      url.searchParams.set('error_description', 'The user declined.')
      return reply.redirect(url.toString())
    }
    const user = request.consoleUser
    const code = await app.repos.oauth.authorize({
      clientId: checked.client.id,
      userId: user.id,
      workspaceId: user.workspaceId,
      resource,
      scope: checked.params.scope!,
      redirectUri: checked.redirectUri,
      codeChallenge: checked.params.code_challenge!,
      now: app.now(),
    })
    url.searchParams.set('code', code)
    return reply.redirect(url.toString())
  })
}

export default authorizeRoutes
