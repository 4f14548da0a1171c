// The MCP server behind POST /mcp (routes/mcp.ts): the SDK's v2 line, loaded on the first MCP
// request rather than at start (the SDK and zod cost about 0.17 s and 30 MB to load, which a
// deployment that never serves MCP should not pay). One stateless 2026-07-28 handler
// (`createMcpHandler`) and the 2025 stateless idiom, chosen by the route's certain era
// (routes/mcp-era.ts) or else by the SDK's own era classifier; both call the factory below for
// every request, which only wires prebuilt handlers into a fresh low-level Server: the tool
// list, documents, skills (routes/mcp-skills.ts), validator and handlers are all built once.
// Ordinary tools/call requests are answered by the fast lane beside it (routes/mcp-fast.ts), held
// byte-identical to this server. With MCP_CONFORMANCE_FIXTURES=true the conformance suite's
// fixtures (routes/mcp-conformance.ts, loaded only then) wrap the handlers.
import type { FastifyInstance } from 'fastify'
import {
  createMcpHandler,
  isLegacyRequest,
  ProtocolError,
  ProtocolErrorCode,
  ResourceNotFoundError,
  SERVER_INFO_META_KEY,
  Server,
  type AuthInfo,
  type CacheHint,
  type CallToolResult,
  type ServerContext,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv'
import { agentDocuments } from '../docs/agent-docs.ts'
import { createMcpSkills } from './mcp-skills.ts'
import type { McpFixtures, McpHandlers } from './mcp-conformance.ts'
import { createFastLane, toolCallResult, type FastLane } from './mcp-fast.ts'
import { UnknownToolError, type Call, type ToolsetSelection } from '../core/operations.ts'
import { readView, toolMeta, uiExtension, viewResources } from './mcp-apps.ts'
import { LEGACY_PROTOCOL_VERSIONS, SERVED_PROTOCOL_VERSIONS, unsupportedVersionAnswer } from './mcp-era.ts'

/** Who we are: the SDK's `serverInfo`, and what the fast lane stamps where the SDK would. */
const SERVER_INFO = { name: 'growthdesk', version: '0.1.0' }
/** Caching hints of the 2026-07-28 revision. The tool list depends on the workspace's disabled
 * tools, so it is private and short; documents and prompts are the same for every caller. */
const CACHE_HINTS: Partial<Record<'tools/list' | 'resources/list' | 'resources/templates/list' | 'prompts/list', CacheHint>> = {
  'tools/list': { ttlMs: 60_000, cacheScope: 'private' },
  'resources/list': { ttlMs: 300_000, cacheScope: 'public' },
  'resources/templates/list': { ttlMs: 300_000, cacheScope: 'public' },
  'prompts/list': { ttlMs: 300_000, cacheScope: 'public' },
}

function callerOf(ctx: ServerContext): Call {
  const caller = ctx.http?.authInfo?.extra?.caller as Call | undefined
  // Every request reaches the handlers through the authenticated route (routes/mcp.ts).
  if (!caller) throw new ProtocolError(ProtocolErrorCode.InternalError, 'The request reached MCP without credentials.')
  return caller
}

/**
 * The SDK's Server, closed more cheaply. Every exchange ends in `_onclose`, which builds a
 * "Connection closed" SdkError to settle whatever is still pending (after a served request:
 * nothing but the finished handler's abort signal). Capturing that error's stack trace was the
 * largest single MCP cost in the CPU profile (~20-40 µs a call, of ~0.2 ms the MCP layer costs);
 * the stack of a routine close says nothing, so it is not captured (zod suppresses its own
 * internal captures the same way). `_onclose` is the SDK's documented subclass hook.
 */
class ExchangeServer extends Server {
  protected override _onclose(): void {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      super._onclose()
    } finally {
      Error.stackTraceLimit = limit
    }
  }
}

export interface McpServer {
  /** Answers one MCP request: `parsed` is its JSON body, or undefined when the body did not parse;
   * `era`, when given, is certain (routes/mcp-era.ts), and the SDK's classifier is not consulted. */
  respond(request: Request, authInfo: AuthInfo, parsed: { message: unknown } | undefined, era?: 'legacy' | 'modern'): Promise<Response>
  /** The fast lane for an ordinary tools/call (routes/mcp-fast.ts): the response body, or
   * undefined when `respond` must answer. */
  fastToolCall: FastLane
  close(): Promise<void>
}

export interface McpServerOptions {
  publicUrl: string
  /** MCP_CONFORMANCE_FIXTURES: the official suite's fixtures beside growthdesk's own (never in production). */
  conformanceFixtures?: boolean
}

export async function createMcpServer(app: FastifyInstance, options: McpServerOptions): Promise<McpServer> {
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
    // The tool's MCP App view (routes/mcp-apps.ts).
    ...(c.ui ? { _meta: toolMeta(c.ui) } : {}),
  }))
  // SKILL.md and the growth skill: the texts of GET /SKILL.md and /skills/growth/SKILL.md, as
  // skills (skill://growthdesk/SKILL.md, skill://growthdesk-growth/SKILL.md) and resources.
  const docs = agentDocuments(publicUrl, app.registry)
  const skills = await createMcpSkills([{ name: 'growthdesk', text: docs.skill }, { name: 'growthdesk-growth', text: docs.growthSkill }], app.log)
  const [skillUri, growthSkillUri] = [skills.uriOf('growthdesk'), skills.uriOf('growthdesk-growth')]
  // The documents' earlier addresses (their HTTP URLs) are still read, not listed.
  const aliases = new Map([[`${publicUrl}/SKILL.md`, skillUri], [`${publicUrl}/skills/growth/SKILL.md`, growthSkillUri]])
  const titles = new Map([[skillUri, 'growthdesk SKILL.md'], [growthSkillUri, 'Growth skill (optional)']])
  const resourceList = { resources: [...skills.resources.map((r) => ({ ...r, title: titles.get(r.uri) })), ...viewResources] }
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
    `Call list_projects to find a project, then pass its id or slug as \`project\`. Read the skill ${skillUri} for details; ` +
    'discover_tools finds every tool, also those tools/list does not show.'
  // The handlers, built once; each reads its caller from the request context.
  const toolByName = new Map(tools.map((t) => [t.name, t]))
  const handlers: McpHandlers = {
    // The toolsets the endpoint's URL asked for (routes/mcp.ts: `/mcp?toolsets=…`, else `default`).
    async listTools(_req, ctx) {
      const toolsets = (ctx.http?.authInfo?.extra?.toolsets as ToolsetSelection | undefined) ?? 'all'
      const contracts = await app.registry.toolsFor(callerOf(ctx).principal, toolsets)
      return { tools: contracts.length === tools.length ? tools : contracts.map((c) => toolByName.get(c.name)!) }
    },
    async callTool(req, ctx): Promise<CallToolResult> {
      const { name, arguments: args } = req.params
      try {
        return await toolCallResult(app, callerOf(ctx), name, args)
      } catch (err) {
        // An unknown (or disabled) tool is a protocol error in MCP, not a failed call; its message
        // is REST's (the closest names, and discover_tools).
        if (err instanceof UnknownToolError) throw new ProtocolError(ProtocolErrorCode.InvalidParams, err.message)
        throw err
      }
    },
    listResources: async () => resourceList,
    listResourceTemplates: async () => ({ resourceTemplates: [] }),
    async readResource(req) {
      // The MCP App views (routes/mcp-apps.ts), then the skills.
      const view = readView(req.params.uri)
      if (view) return view
      const uri = aliases.get(req.params.uri) ?? req.params.uri
      const content = skills.read(uri)
      // -32602 with data {uri} on every revision (the 2026-07-28 resource-not-found error).
      if (!content) throw new ResourceNotFoundError(req.params.uri, `Unknown resource: ${req.params.uri}`)
      return { contents: [{ ...content, uri: req.params.uri }] }
    },
    listPrompts: async () => promptList,
    async getPrompt(req) {
      if (req.params.name !== 'growth_exploration') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`)
      const project = req.params.arguments?.project
      const text = `${project ? `Explore the growth of project "${project}" with the growthdesk tools.\n\n` : ''}${docs.growthSkill}`
      return { description: 'The growthdesk growth skill', messages: [{ role: 'user' as const, content: { type: 'text' as const, text } }] }
    },
  }
  const fixtures: McpFixtures | undefined = options.conformanceFixtures ? (await import('./mcp-conformance.ts')).conformanceFixtures(app) : undefined

  /** One Server per request and era (the SDK binds an instance to one exchange). */
  function newServer(era: 'legacy' | 'modern'): Server {
    const server = new ExchangeServer(SERVER_INFO, {
      // extensions: the skills (routes/mcp-skills.ts) and MCP App views (routes/mcp-apps.ts), in both eras.
      capabilities: { tools: { listChanged: false }, resources: {}, prompts: {}, extensions: { ...skills.capability, ...uiExtension }, ...fixtures?.capabilities(era) },
      instructions,
      jsonSchemaValidator: validator,
      cacheHints: CACHE_HINTS,
      // 2025-03-26 and later (a 2024 initialize negotiates 2025-11-25), and 2026-07-28.
      supportedProtocolVersions: [...SERVED_PROTOCOL_VERSIONS],
    })
    server.setRequestHandler('tools/list', handlers.listTools)
    server.setRequestHandler('tools/call', handlers.callTool)
    server.setRequestHandler('resources/list', handlers.listResources)
    server.setRequestHandler('resources/templates/list', handlers.listResourceTemplates)
    server.setRequestHandler('resources/read', handlers.readResource)
    server.setRequestHandler('prompts/list', handlers.listPrompts)
    server.setRequestHandler('prompts/get', handlers.getPrompt)
    skills.install(server)
    fixtures?.install(server, era, handlers)
    return server
  }

  // 2026-07-28 traffic: the SDK's per-request handler, strict (legacy: 'reject') because 2025
  // traffic never reaches it — see `legacy` below.
  const modern = createMcpHandler(() => newServer('modern'), {
    legacy: 'reject',
    // 'auto': one JSON body, since no handler here emits anything before its result.
    onerror: (err) => app.log.debug({ err }, 'MCP request rejected'),
  })

  /** 2025 traffic: the SDK's stateless legacy idiom (a fresh instance and transport per request,
   * `sessionIdGenerator: undefined`) as `legacyStatelessFallback` builds it, plus
   * `enableJsonResponse` — the built-in fallback answers with an SSE stream, and this endpoint has
   * always answered 2025 clients with JSON (clients that accept only JSON included). */
  async function legacy(request: Request, authInfo: AuthInfo, parsedBody: unknown): Promise<Response> {
    const refusal = unsupportedVersionAnswer(parsedBody, request.headers.get('mcp-protocol-version'))
    if (refusal !== undefined) return new Response(refusal, { status: 400, headers: { 'content-type': 'application/json' } })
    const served = await fixtures?.legacy(request, authInfo, parsedBody, () => newServer('legacy'))
    if (served) return served
    const server = newServer('legacy')
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request, parsedBody === undefined ? { authInfo } : { authInfo, parsedBody })
    } finally {
      await server.close()
    }
  }

  const fastToolCall = createFastLane(app, { legacyVersions: LEGACY_PROTOCOL_VERSIONS, serverInfoKey: SERVER_INFO_META_KEY, serverInfo: SERVER_INFO })

  return {
    fastToolCall,
    // Unless the era is certain, the SDK's own classification decides it (isLegacyRequest runs
    // exactly the code createMcpHandler runs): no envelope claim, or a body that does not parse,
    // is 2025 traffic.
    async respond(request, authInfo, parsed, era) {
      return !parsed || (era ?? ((await isLegacyRequest(request, parsed.message)) ? 'legacy' : 'modern')) === 'legacy'
        ? legacy(request, authInfo, parsed?.message)
        : modern.fetch(request, { authInfo, parsedBody: parsed.message })
    },
    async close() {
      await fixtures?.close()
      await modern.close()
    },
  }
}
