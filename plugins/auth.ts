// Bearer credentials: which kinds each surface accepts, and the principal they act as.
import fp from 'fastify-plugin'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { appError } from '../core/errors.ts'
import { hashKey, keyKindNames, parseKey, type KeyKind } from '../db/keys.ts'
import type { Principal } from '../core/access.ts'
import type { Surface } from '../core/operations.ts'
import type { Bucket } from './fair-use.ts'

/** The surfaces a bearer credential reaches (the console has sessions, the CLI the operator). */
export type BearerSurface = Exclude<Surface, 'console' | 'cli' | 'operation'>

export const surfaceKinds: Record<BearerSurface, KeyKind[]> = {
  'project-api': ['mcp', 'oauth'],
  'tools-api': ['service', 'oauth'],
  mcp: ['mcp', 'service', 'oauth'],
  ingest: ['ingest', 'service', 'mcp', 'oauth'],
}

declare module 'fastify' {
  interface FastifyInstance {
    /** A hook (use it as onRequest, so no body is read before the caller is known). */
    authenticate(surface: BearerSurface): (request: FastifyRequest, reply: FastifyReply) => Promise<void>
  }
  interface FastifyRequest {
    principal: Principal
  }
}

const listKinds = (kinds: KeyKind[]) => kinds.map((k) => keyKindNames[k]).join(' or ')
/** "an ingest key", "an OAuth access token", "a service key". */
const withArticle = (phrase: string) => `${/^[aeiou]/i.test(phrase) ? 'an' : 'a'} ${phrase}`

async function authPlugin(app: FastifyInstance, options: { publicUrl: string }) {
  app.decorateRequest('principal', null as unknown as Principal)

  function challenge(reply: FastifyReply, surface: BearerSurface, error?: 'invalid_token') {
    const params = ['realm="growthdesk"']
    if (error) params.push(`error="${error}"`)
    if (surface === 'mcp') params.push(`resource_metadata="${options.publicUrl}/.well-known/oauth-protected-resource/mcp"`)
    reply.header('WWW-Authenticate', `Bearer ${params.join(', ')}`)
  }

  /** The bearer credential of a request and its hash (the stored form), or a 401. */
  function credentialOf(request: FastifyRequest, reply: FastifyReply, surface: BearerSurface): { key: string; hash: string } {
    const accepted = surfaceKinds[surface]
    const header = request.headers.authorization
    // The scheme, spaces, one credential (RFC 6750). Only space and tab separate: JavaScript's \s
    // would also take a no-break space or a line separator for one. Anything not a key is then
    // refused as malformed (and counts as a failed authentication).
    const match = header ? /^Bearer[ \t]+([^ \t]+)[ \t]*$/i.exec(header) : null
    if (!match) {
      challenge(reply, surface)
      throw appError('Unauthorized', `Authentication required: send the header Authorization: Bearer <key> with ${withArticle(listKinds(accepted))}.`)
    }
    const key = match[1]!
    return { key, hash: hashKey(key) }
  }

  async function principalFor(request: FastifyRequest, reply: FastifyReply, surface: BearerSurface, key: string, hash: string): Promise<Principal> {
    const accepted = surfaceKinds[surface]
    const kind = parseKey(key)
    if (!kind) {
      challenge(reply, surface, 'invalid_token')
      throw appError('Unauthorized', 'The bearer credential is malformed or mistyped (it is not a growthdesk key, or its checksum does not match).')
    }
    if (!accepted.includes(kind)) {
      challenge(reply, surface, 'invalid_token')
      throw appError('Unauthorized', `This endpoint takes ${withArticle(listKinds(accepted))}; ${withArticle(keyKindNames[kind])} was sent.`)
    }
    const now = app.now()
    const row = await app.repos.apiKeys.findActive(hash, now)
    if (!row) {
      challenge(reply, surface, 'invalid_token')
      throw appError('Unauthorized', 'The key is not valid: it is unknown, revoked or expired.')
    }
    if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() >= 60_000) {
      app.repos.apiKeys.touch(row, now).catch((err) => request.log.warn({ err }, 'could not record key use'))
    }
    return {
      keyId: row.id,
      kind: row.kind,
      userId: row.userId,
      email: row.email,
      workspaceId: row.workspaceId,
      projectId: row.projectId,
      readOnly: row.readOnly,
    }
  }

  app.decorate('authenticate', (surface: BearerSurface) => {
    const bucket: Bucket = surface === 'ingest' ? 'ingest' : 'requests'
    return async function authenticate(request, reply) {
      // What a credential sees is nobody else's: no shared cache may keep it.
      reply.header('cache-control', 'no-store')
      const { key, hash } = credentialOf(request, reply, surface)
      // A credential already over its limit is turned away before it is looked up.
      const refused = app.fairUse.checkCredential(request, reply, hash, bucket)
      if (refused) await refused
      // An address that keeps failing authentication is limited in its failures, not in its
      // requests: others behind the same address (an office behind one NAT) keep working with
      // valid credentials. Its credentials are still checked — one indexed lookup of a hash —
      // and only a failure is refused (429): guessing stays limited. A credential that is not
      // even well formed for this surface is refused without a lookup, so a flood of junk
      // costs no database work.
      const overLimit = app.fairUse.addressOverLimit(request)
      if (overLimit) {
        const kind = parseKey(key)
        if (!kind || !surfaceKinds[surface].includes(kind)) app.fairUse.checkAddress(request, reply)
      }
      try {
        request.principal = await principalFor(request, reply, surface, key, hash)
      } catch (err) {
        // Only a refused credential is a failure (a database error is not the client's).
        if ((err as { statusCode?: number }).statusCode !== 401) throw err
        if (overLimit) {
          reply.removeHeader('www-authenticate')
          app.fairUse.checkAddress(request, reply)
        }
        await app.fairUse.authFailed(request)
        throw err
      }
      // A request turned away for concurrency is not counted against the rate.
      const busy = app.fairUse.enter(request, reply, hash)
      if (busy) await busy
      await app.fairUse.charge(request, reply, hash, bucket)
    }
  })

  // Every response says what it is; a browser never guesses another type from the body.
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('x-content-type-options', 'nosniff')
  })
}

export default fp(authPlugin, { name: 'auth', dependencies: ['repositories', 'registry', 'fair-use'] })
