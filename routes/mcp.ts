// The MCP endpoint (spec 4.3): stateless Streamable HTTP with JSON responses. Every POST gets
// a fresh low-level Server and transport (never shared: responses must not cross clients);
// the tool list, documents and validator are built once.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js'
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js'
import { appError, errorBody } from '../core/errors.ts'
import { growthSkillMarkdown, skillMarkdown } from '../docs/agent-docs.ts'
import { mcpAllowedHosts, mcpAllowedOrigins } from './mcp-origins.ts'

const VERSION = '0.1.0'
/** We always answer with JSON; clients that accept only JSON are served too. */
const FIXED_HEADERS: [string, string][] = [['accept', 'application/json, text/event-stream']]

const mcpRoutes: FastifyPluginAsync<{ publicUrl: string; allowedOrigins: string[] }> = async (app, options) => {
  const { publicUrl } = options
  const validator = new AjvJsonSchemaValidator()
  const contracts = app.registry.contracts()
  const tools: Tool[] = contracts.map((c) => ({
    name: c.name,
    title: c.title,
    description: c.description,
    inputSchema: c.input_schema as unknown as Tool['inputSchema'],
    outputSchema: c.output_schema as unknown as Tool['outputSchema'],
    annotations: c.annotations,
  }))
  const toolNames = new Set(tools.map((t) => t.name))
  const documents = [
    { uri: `${publicUrl}/SKILL.md`, name: 'skill', title: 'growthdesk SKILL.md', description: 'How an agent uses growthdesk: addresses, keys, project selection, tools, errors.', text: skillMarkdown(publicUrl, contracts) },
    { uri: `${publicUrl}/skills/growth/SKILL.md`, name: 'growth-skill', title: 'Growth skill (optional)', description: 'Exploration ideas; never changes tool inputs.', text: growthSkillMarkdown(publicUrl) },
  ]
  const instructions =
    'growthdesk: growth opportunities, a review pipeline, daily metrics, project cards and memories. ' +
    `Call list_projects to find a project, then pass its id or slug as \`project\`. Read the resource ${publicUrl}/SKILL.md for details.`
  const allowedOrigins = mcpAllowedOrigins(publicUrl, options.allowedOrigins)
  const allowedHosts = mcpAllowedHosts(publicUrl)
  const endpoint = `${publicUrl}/mcp`

  // Bodies reach the handler as text: malformed JSON must become the transport's JSON-RPC -32700
  // error, not the REST 400 of the app's JSON parser.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => done(null, body))

  function newServer(request: FastifyRequest): Server {
    const server = new Server({ name: 'growthdesk', version: VERSION }, {
      capabilities: { tools: { listChanged: false }, resources: {}, prompts: {} },
      instructions,
      jsonSchemaValidator: validator,
    })
    const principal = request.principal
    const projectHeader = request.headers['x-service-project']
    const projectRef = typeof projectHeader === 'string' ? projectHeader : undefined

    server.setRequestHandler(ListToolsRequestSchema, async () => {
      const disabled = await app.repos.workspaces.disabledTools(principal.workspaceId)
      return { tools: tools.filter((t) => !disabled.includes(t.name)) }
    })

    server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
      const { name, arguments: args } = req.params
      if (!toolNames.has(name) || (await app.repos.workspaces.disabledTools(principal.workspaceId)).includes(name)) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
      }
      try {
        // asTool: false — the tool and its being enabled were checked just above; the registry
        // need not look the workspace's disabled tools up a second time.
        const result = (await app.registry.call(name, args ?? {}, { principal, projectRef, log: request.log, asTool: false })) as Record<string, unknown>
        return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result }
      } catch (err) {
        const e = err as Error & { code?: string; statusCode?: number }
        const known = e.code?.startsWith('GD_') && (e.statusCode ?? 500) < 500
        if (!known) request.log.error({ err }, 'tool call failed')
        const body = known ? errorBody(e) : errorBody(appError('Internal', 'Something went wrong on our side; it has been logged.'))
        return { isError: true, content: [{ type: 'text', text: JSON.stringify(body) }] }
      }
    })

    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: documents.map(({ text: _text, ...d }) => ({ ...d, mimeType: 'text/markdown' })),
    }))

    server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
      const doc = documents.find((d) => d.uri === req.params.uri)
      if (!doc) throw new McpError(ErrorCode.InvalidParams, `Unknown resource: ${req.params.uri}`)
      return { contents: [{ uri: doc.uri, mimeType: 'text/markdown', text: doc.text }] }
    })

    server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: [
        {
          name: 'growth_exploration',
          title: 'Explore a project\'s growth',
          description: 'Optional ideas for exploring growth with these tools (the growth skill).',
          arguments: [{ name: 'project', description: 'Project id or slug to explore', required: false }],
        },
      ],
    }))

    server.setRequestHandler(GetPromptRequestSchema, async (req) => {
      if (req.params.name !== 'growth_exploration') throw new McpError(ErrorCode.InvalidParams, `Unknown prompt: ${req.params.name}`)
      const project = req.params.arguments?.project
      const text = `${project ? `Explore the growth of project "${project}" with the growthdesk tools.\n\n` : ''}${documents[1]!.text}`
      return { description: 'The growthdesk growth skill', messages: [{ role: 'user', content: { type: 'text', text } }] }
    })
    return server
  }

  function notAllowed(_req: FastifyRequest, reply: FastifyReply) {
    reply.header('Allow', 'POST')
    return reply.code(405).send(errorBody(appError('MethodNotAllowed', 'The MCP endpoint is stateless: use POST.')))
  }
  app.get('/mcp', { schema: { hide: true } }, notAllowed)
  app.delete('/mcp', { schema: { hide: true } }, notAllowed)

  app.post('/mcp', {
    schema: {
      tags: ['mcp'],
      summary: 'MCP endpoint (Streamable HTTP, stateless, JSON responses)',
      description: 'JSON-RPC 2.0 messages of the Model Context Protocol: initialize, tools/list, tools/call, resources/*, prompts/*.',
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
    // The Web Request carries only the headers the transport reads, and the body already parsed
    // (no body stream to build and read back). A body that does not parse goes to the
    // transport as it came, which answers it exactly as it answers any bad request.
    const raw = typeof request.body === 'string' ? request.body : ''
    let parsed: { message: unknown } | undefined
    try {
      parsed = { message: JSON.parse(raw) }
    } catch {
      parsed = undefined
    }
    const headers = new Headers(FIXED_HEADERS)
    const contentType = request.headers['content-type']
    if (contentType !== undefined) headers.set('content-type', contentType)
    const protocolVersion = request.headers['mcp-protocol-version']
    if (typeof protocolVersion === 'string') headers.set('mcp-protocol-version', protocolVersion)

    const server = newServer(request)
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      const response = parsed
        ? await transport.handleRequest(new Request(endpoint, { method: 'POST', headers }), { parsedBody: parsed.message })
        : await transport.handleRequest(new Request(endpoint, { method: 'POST', headers, body: raw }))
      const text = await response.text()
      reply.code(response.status)
      response.headers.forEach((value, key) => {
        if (key !== 'content-length') reply.header(key, value)
      })
      return reply.send(text === '' ? undefined : text)
    } finally {
      await server.close()
    }
  })
}

export default mcpRoutes
