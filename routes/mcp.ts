// The MCP endpoint (spec 4.3): one POST /mcp serves the stateless 2026-07-28 revision
// (per-request `_meta` envelope, `server/discover`, Mcp-Method/Mcp-Name header checks, caching
// hints) and the 2025 revisions (`initialize`, JSON responses). This plugin checks the origin,
// the host and the key, reads the body and, where it is certain (routes/mcp-era.ts), the era;
// the MCP server itself (routes/mcp-server.ts, the SDK) is loaded on the first request, once.
// An ordinary tools/call of a certain era takes the fast lane (routes/mcp-fast.ts) instead.
import { setMaxListeners } from 'node:events'
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { AuthInfo } from '@modelcontextprotocol/server'
import { Type } from '@sinclair/typebox'
import { appError, errorBody } from '../core/errors.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../core/validation.ts'
import { mcpAllowedHosts, mcpAllowedOrigins } from '../core/origins.ts'
import type { McpServer } from './mcp-server.ts'
import { ErrorBody, apiErrorResponse } from '../schemas/errors.ts'
import { certainEra } from './mcp-era.ts'
import { callOf } from '../core/operations.ts'

/** A JSON-RPC 2.0 response as the SDK writes it (the body is its bytes, never serialized here). */
const JsonRpcResponse = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: Type.Union([Type.String(), Type.Integer(), Type.Null()]),
  result: Type.Optional(Type.Object({}, { additionalProperties: true })),
  error: Type.Optional(Type.Object({ code: Type.Integer(), message: Type.String(), data: Type.Optional(Type.Unknown()) })),
})

/** We always answer with JSON; clients that accept only JSON are served too. */
const ACCEPT = 'application/json, text/event-stream'
/** Distinct header sets whose body-less Web Request is kept (a client sends one or a few). */
const REQUEST_CACHE_SIZE = 256

export interface McpRoutesOptions {
  publicUrl: string
  allowedOrigins: string[]
  /** The tools/call fast lane (routes/mcp-fast.ts); false: the SDK answers every request. Default true. */
  fastLane?: boolean
  /** Told which path answered each request that reached the MCP server. */
  onPath?: (path: 'fast' | 'sdk') => void
  /** MCP_CONFORMANCE_FIXTURES: the official suite's fixtures (routes/mcp-conformance.ts). Default false. */
  conformanceFixtures?: boolean
}

const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, options) => {
  const { publicUrl, onPath } = options
  const fastLane = options.fastLane ?? true
  const allowedOrigins = mcpAllowedOrigins(publicUrl, options.allowedOrigins)
  const allowedHosts = mcpAllowedHosts(publicUrl)
  const endpoint = `${publicUrl}/mcp`

  let loading: Promise<McpServer> | undefined
  /** The MCP server, loaded and built by the first request that needs it (a failure is retried). */
  const server = () =>
    (loading ??= import('./mcp-server.ts').then(
      ({ createMcpServer }) => createMcpServer(app, { publicUrl, conformanceFixtures: options.conformanceFixtures }),
      (err: unknown) => {
        loading = undefined
        throw err
      }
    ))
  app.addHook('onClose', async () => {
    if (loading) await (await loading.catch(() => undefined))?.close()
  })

  // Bodies reach the handler as text: malformed JSON must become the SDK's JSON-RPC -32700
  // error, not the REST 400 of the app's JSON parser.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body))

  function notAllowed(_req: FastifyRequest, reply: FastifyReply) {
    reply.header('Allow', 'POST')
    return reply.code(405).send(errorBody(appError('MethodNotAllowed', 'The MCP endpoint is stateless: use POST.')))
  }
  app.get('/mcp', { schema: { hide: true } }, notAllowed)
  app.delete('/mcp', { schema: { hide: true } }, notAllowed)

  const requests = new Map<string, Request>()
  /** The body-less Request for a header set (`key`: name, value, name, value… each line-ended). */
  function cachedRequest(key: string): Request {
    let webRequest = requests.get(key)
    if (!webRequest) {
      if (requests.size >= REQUEST_CACHE_SIZE) requests.clear()
      webRequest = new Request(endpoint, { method: 'POST', headers: headersOf(key) })
      // Each 2026-07-28 exchange in flight listens to the (never aborted) signal until it closes.
      setMaxListeners(0, webRequest.signal)
      requests.set(key, webRequest)
    }
    return webRequest
  }

  app.post<{ Querystring: { toolsets?: string } }>('/mcp', {
    schema: {
      tags: ['mcp'],
      querystring: Type.Object({
        toolsets: Type.Optional(Type.String({
          maxLength: 200,
          description: 'Which toolsets tools/list lists besides `default`: comma-separated names (`admin`), or `all`. Every tool is callable whatever is listed.',
        })),
      }, { additionalProperties: false }),
      summary: 'MCP endpoint (Streamable HTTP, stateless, JSON responses; revisions 2026-07-28 and 2025-*)',
      description:
        'JSON-RPC 2.0 messages of the Model Context Protocol. 2026-07-28: server/discover, then any request with ' +
        '`_meta` (protocol version, client capabilities) and Mcp-Method/Mcp-Name headers. 2025-03-26/06-18/11-25: ' +
        'initialize, tools/list, tools/call, resources/*, prompts/*.',
      security: [{ bearer: [] }],
      response: {
        200: { description: 'The JSON-RPC response: a result, or a JSON-RPC error (a tool\'s own failure is a result with isError).', content: { 'application/json': { schema: JsonRpcResponse } } },
        202: { type: 'null', description: 'A notification or a response from the client, accepted: no body.' },
        400: {
          description: 'Not a usable JSON-RPC request (a JSON-RPC error with id null: -32700 unparseable, -32600 invalid), a body whose length does not match Content-Length or an unknown toolset in `toolsets` (the API error object).',
          content: { 'application/json': { schema: Type.Union([JsonRpcResponse, ErrorBody]) } },
        },
        401: apiErrorResponse('No key, or one this endpoint does not take (WWW-Authenticate names the protected resource metadata).'),
        403: apiErrorResponse('An Origin or Host this server does not serve (DNS-rebinding protection).'),
        413: apiErrorResponse('The body is larger than 1 MiB.'),
        429: apiErrorResponse('Too many requests with this credential (Retry-After says when to come back).'),
      },
    },
    onRequest: [
      async (request) => {
        // DNS-rebinding protection: only our own host names, and only allowed browser origins.
        const origin = request.headers.origin
        if (origin !== undefined && !allowedOrigins.has(origin)) throw appError('Forbidden', `Origin ${origin} is not allowed to use this MCP endpoint.`)
        const host = request.headers.host
        if (!host || !allowedHosts.has(host.toLowerCase())) throw appError('Forbidden', `Host ${host ?? '(none)'} is not served here.`)
      },
      // Then who is calling, before any body is read.
      app.authenticate('mcp'),
    ],
  }, async (request, reply) => {
    // The Web Request carries only the headers the SDK reads (content type, the MCP headers),
    // and the body already parsed. A body that does not parse goes to the SDK as it came,
    // which answers it exactly as it answers any bad request.
    const raw = typeof request.body === 'string' ? request.body : ''
    let parsed: { message: unknown } | undefined
    try {
      parsed = { message: JSON.parse(raw) }
    } catch {
      parsed = undefined
    }
    // JSON-RPC 2.0: an empty batch is one Invalid Request error; so is JSON nested beyond reason.
    const invalid = parsed && (Array.isArray(parsed.message) && parsed.message.length === 0
      ? 'An empty JSON-RPC batch is not a request.'
      : nestsDeeperThan(parsed.message) ? `The JSON-RPC message nests deeper than ${MAX_JSON_DEPTH} levels.` : undefined)
    if (invalid) return reply.code(400).send({ jsonrpc: '2.0', id: null, error: { code: -32600, message: invalid } })
    const caller = callOf(request, 'mcp')
    // What tools/list shows (an unknown toolset is a 400 before anything else).
    const toolsets = app.registry.parseToolsets(request.query.toolsets)
    const protocolVersion = request.headers['mcp-protocol-version']
    const era = parsed && certainEra(parsed.message, typeof protocolVersion === 'string' ? protocolVersion : undefined)
    const mcp = await server()
    // An ordinary tools/call of a certain era: the fast lane (routes/mcp-fast.ts), which answers
    // as the SDK would, byte for byte, or leaves the request to it.
    if (parsed && era && fastLane) {
      const body = await mcp.fastToolCall(parsed.message, request.headers, caller, era)
      if (body !== undefined) {
        onPath?.('fast')
        reply.code(200).header('content-type', 'application/json')
        // Bytes as they are; a string through a serializer that changes nothing: Fastify adds
        // "; charset=utf-8" to the SDK's content type for a string sent without one.
        return typeof body === 'string' ? reply.serializer(asIs).send(body) : reply.send(body)
      }
    }
    // The headers the SDK reads: the content type and the MCP headers.
    let key = ''
    for (const name in request.headers) {
      const value = request.headers[name]
      if (typeof value === 'string' && (name === 'content-type' || name.startsWith('mcp-'))) key += `${name}\n${value}\n`
    }
    const authInfo: AuthInfo = { token: '', clientId: request.principal.keyId, scopes: [], extra: { caller, toolsets } }
    // A parsed body travels beside the Request, which then has none: one Request serves every
    // call with the same headers (the SDK only reads it), so it is built once per header set.
    const webRequest = parsed ? cachedRequest(key) : new Request(endpoint, { method: 'POST', headers: headersOf(key), body: raw })
    onPath?.('sdk')
    const response = await mcp.respond(webRequest, authInfo, parsed, era)
    // Whatever status the SDK chose: one of those documented, or another of its own (406, 415).
    const sdkReply: FastifyReply = reply
    sdkReply.code(response.status)
    response.headers.forEach((value, key) => {
      if (key !== 'content-length') reply.header(key, value)
    })
    // An event stream goes out as it is written: a server's request on it (the conformance
    // fixtures' sampling, say) waits for the client's answer, which needs the request first.
    if (response.body && response.headers.get('content-type')?.startsWith('text/event-stream')) {
      return reply.send(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>))
    }
    // The bytes as the SDK wrote them (no decoding to text and encoding again).
    const body = Buffer.from(await response.arrayBuffer())
    return reply.send(body.length === 0 ? undefined : body)
  })
}

/** A reply serializer for text that is already the body. */
const asIs = (payload: unknown) => payload as string

function headersOf(key: string): Headers {
  const headers = new Headers()
  headers.set('accept', ACCEPT)
  const lines = key.split('\n')
  for (let i = 0; i + 1 < lines.length; i += 2) headers.set(lines[i]!, lines[i + 1]!)
  return headers
}

export default mcpRoutes
