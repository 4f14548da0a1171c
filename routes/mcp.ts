// The MCP endpoint (spec 4.3) on the SDK's v2 line: one POST /mcp serves the stateless
// 2026-07-28 revision (per-request `_meta` envelope, `server/discover`, Mcp-Method/Mcp-Name
// header checks, caching hints) and, through the SDK's stateless legacy fallback, the 2025
// revisions (`initialize`, JSON responses). `createMcpHandler` is built once; it calls the
// factory below for every request, which only wires prebuilt handlers into a fresh low-level
// Server: the tool list, documents, validator and handlers are all built once.
import type { FastifyBaseLogger, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  Server,
  type AuthInfo,
  type CacheHint,
  type CallToolResult,
  type ServerContext,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import type { Principal } from '../core/access.ts'
import { appError, errorBody, errorResponse } from '../core/errors.ts'
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../core/validation.ts'
import { growthSkillMarkdown, skillMarkdown } from '../docs/agent-docs.ts'
import { mcpAllowedHosts, mcpAllowedOrigins } from '../core/origins.ts'

const VERSION = '0.1.0'
/** We always answer with JSON; clients that accept only JSON are served too. */
const ACCEPT = 'application/json, text/event-stream'
/** Caching hints of the 2026-07-28 revision. The tool list depends on the workspace's disabled
 * tools, so it is private and short; documents and prompts are the same for every caller. */
const CACHE_HINTS: Partial<Record<'tools/list' | 'resources/list' | 'resources/templates/list' | 'prompts/list', CacheHint>> = {
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 300_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 300_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 300_000, cacheScope: 'public' },
}

/** What the Fastify route knows about the caller, handed to the handlers as `authInfo.extra`. */
interface Caller {
  principal: Principal
  projectRef: string | undefined
  log: FastifyBaseLogger
}

function callerOf(ctx: ServerContext): Caller {
  const caller = ctx.http?.authInfo?.extra?.caller as Caller | undefined
  // Every request reaches the handlers through the authenticated route below.
  if (!caller) throw new ProtocolError(ProtocolErrorCode.InternalError, 'The request reached MCP without credentials.')
  return caller
}

const mcpRoutes: FastifyPluginAsync<{ publicUrl: string; allowedOrigins: string[] }> = async (app, options) => {
  const { publicUrl } = options
  const validator = new AjvJsonSchemaValidator()
  const contracts = app.registry.contracts()
  // Registry order: fixed at start-up, so tools/list is the same list in the same order every time.
  const tools: Tool[] = contracts.map((c) => ({
    name: c.name,
    title: c.title,
    description: c.description,
    inputSchema: c.input_schema as unknown as Tool['inputSchema'],
    outputSchema: c.output_schema as unknown as Tool['outputSchema'],
    annotations: c.annotations,
  }))
  const documents = [
    { uri: `${publicUrl}/SKILL.md`, name: 'skill', title: 'growthdesk SKILL.md', description: 'How an agent uses growthdesk: addresses, keys, project selection, tools, errors.', text: skillMarkdown(publicUrl, contracts) },
    { uri: `${publicUrl}/skills/growth/SKILL.md`, name: 'growth-skill', title: 'Growth skill (optional)', description: 'Exploration ideas; never changes tool inputs.', text: growthSkillMarkdown(publicUrl) },
  ]
  const resourceList = { resources: documents.map(({ text: _text, ...d }) => ({ ...d, mimeType: 'text/markdown' })) }
  const promptList = {
    prompts: [
      {
        name: 'growth_exploration',
        title: 'Explore a project\'s growth',
        description: 'Optional ideas for exploring growth with these tools (the growth skill).',
        arguments: [{ name: 'project', description: 'Project id or slug to explore', required: false }],
      },
    ],
  }
  const instructions =
    'growthdesk: growth opportunities, a review pipeline, daily metrics, project cards and memories. ' +
    `Call list_projects to find a project, then pass its id or slug as \`project\`. Read the resource ${publicUrl}/SKILL.md for details.`
  const allowedOrigins = mcpAllowedOrigins(publicUrl, options.allowedOrigins)
  const allowedHosts = mcpAllowedHosts(publicUrl)
  const endpoint = `${publicUrl}/mcp`

  // The handlers, built once; each reads its caller from the request context.
  const toolByName = new Map(tools.map((t) => [t.name, t]))
  const listTools = async (_req: unknown, ctx: ServerContext) => {
    const contracts = await app.registry.toolsFor(callerOf(ctx).principal)
    return { tools: contracts.length === tools.length ? tools : contracts.map((c) => toolByName.get(c.name)!) }
  }

  const callTool = async (req: { params: { name: string; arguments?: Record<string, unknown> } }, ctx: ServerContext): Promise<CallToolResult> => {
    const { principal, projectRef, log } = callerOf(ctx)
    const { name, arguments: args } = req.params
    // An unknown (or disabled) tool is a protocol error in MCP, not a failed call.
    const op = await app.registry.toolFor(principal, name).catch(() => {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`)
    })
    try {
      const result = await app.registry.invoke(op, args ?? {}, { principal, projectRef, surface: 'mcp', log })
      // The text is what the output schema writes, byte for byte what POST /v1/tools/:name returns.
      const text = app.registry.serialize(op, result)
      return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) }
    } catch (err) {
      const { body, internal } = errorResponse(err)
      if (internal) log.error({ err }, 'tool call failed')
      // The REST error object as text. No structuredContent: it would have to match the
      // tool's outputSchema, and the 2025 SDK client validates it even on errors.
      return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
    }
  }

  const listResources = async () => resourceList
  const listResourceTemplates = async () => ({ resourceTemplates: [] })
  const readResource = async (req: { params: { uri: string } }) => {
    const doc = documents.find((d) => d.uri === req.params.uri)
    // -32602 with data {uri} on every revision (the 2026-07-28 resource-not-found error).
    if (!doc) throw new ResourceNotFoundError(req.params.uri, `Unknown resource: ${req.params.uri}`)
    return { contents: [{ uri: doc.uri, mimeType: 'text/markdown', text: doc.text }] }
  }
  const listPrompts = async () => promptList
  const getPrompt = async (req: { params: { name: string; arguments?: Record<string, string> } }) => {
    if (req.params.name !== 'growth_exploration') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`)
    const project = req.params.arguments?.project
    const text = `${project ? `Explore the growth of project "${project}" with the growthdesk tools.\n\n` : ''}${documents[1]!.text}`
    return { description: 'The growthdesk growth skill', messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] }
  }

  /** One Server per request and era (the SDK binds an instance to one exchange). */
  function newServer(): Server {
    const server = new Server({ name: 'growthdesk', version: VERSION }, {
      capabilities: { tools: { listChanged: false }, resources: {}, prompts: {} },
      instructions,
      jsonSchemaValidator: validator,
      cacheHints: CACHE_HINTS,
    })
    server.setRequestHandler('tools/list', listTools)
    server.setRequestHandler('tools/call', callTool)
    server.setRequestHandler('resources/list', listResources)
    server.setRequestHandler('resources/templates/list', listResourceTemplates)
    server.setRequestHandler('resources/read', readResource)
    server.setRequestHandler('prompts/list', listPrompts)
    server.setRequestHandler('prompts/get', getPrompt)
    return server
  }

  // 2026-07-28 traffic: the SDK's per-request handler, strict (legacy: 'reject') because 2025
  // traffic never reaches it — see `legacy` below.
  const modern = createMcpHandler(newServer, {
    legacy: 'reject',
    // 'auto': one JSON body, since no handler here emits anything before its result.
    onerror: (err) => app.log.debug({ err }, 'MCP request rejected'),
  })
  app.addHook('onClose', async () => {
    await modern.close()
  })

  /** 2025 traffic: the SDK's stateless legacy idiom (a fresh instance and transport per request,
   * `sessionIdGenerator: undefined`) as `legacyStatelessFallback` builds it, plus
   * `enableJsonResponse` — the built-in fallback answers with an SSE stream, and this endpoint has
   * always answered 2025 clients with JSON (clients that accept only JSON included). */
  async function legacy(request: Request, authInfo: AuthInfo, parsedBody: unknown): Promise<Response> {
    const server = newServer()
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request, parsedBody === undefined ? { authInfo } : { authInfo, parsedBody })
    } finally {
      await server.close()
    }
  }

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

  app.post('/mcp', {
    schema: {
      tags: ['mcp'],
      summary: 'MCP endpoint (Streamable HTTP, stateless, JSON responses; revisions 2026-07-28 and 2025-*)',
      description:
        'JSON-RPC 2.0 messages of the Model Context Protocol. 2026-07-28: server/discover, then any request with ' +
        '`_meta` (protocol version, client capabilities) and Mcp-Method/Mcp-Name headers. 2025-03-26/06-18/11-25: ' +
        'initialize, tools/list, tools/call, resources/*, prompts/*.',
      security: [{ bearer: [] }],
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
    const headers = new Headers()
    headers.set('accept', ACCEPT)
    for (const [key, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && (key === 'content-type' || key.startsWith('mcp-'))) headers.set(key, value)
    }
    const projectHeader = request.headers['x-service-project']
    const caller: Caller = { principal: request.principal, projectRef: typeof projectHeader === 'string' ? projectHeader : undefined, log: request.log }
    const authInfo: AuthInfo = { token: '', clientId: request.principal.keyId, scopes: [], extra: { caller } }
    // The SDK's own classification decides the era (isLegacyRequest runs exactly the code
    // createMcpHandler runs): no envelope claim, or a body that does not parse, is 2025 traffic.
    const webRequest = parsed ? new Request(endpoint, { method: 'POST', headers }) : new Request(endpoint, { method: 'POST', headers, body: raw })
    const response = !parsed || (await isLegacyRequest(webRequest, parsed.message))
      ? await legacy(webRequest, authInfo, parsed?.message)
      : await modern.fetch(webRequest, { authInfo, parsedBody: parsed.message })
    const text = await response.text()
    reply.code(response.status)
    response.headers.forEach((value, key) => {
      if (key !== 'content-length') reply.header(key, value)
    })
    return reply.send(text === '' ? undefined : text)
  })
}

export default mcpRoutes
