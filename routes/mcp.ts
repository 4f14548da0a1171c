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
  const documents = [
    { uri: `${publicUrl}/SKILL.md`, name: 'skill', title: 'growthdesk SKILL.md', description: 'How an agent uses growthdesk: addresses, keys, project selection, tools, errors.', text: skillMarkdown(publicUrl, contracts) },
    { uri: `${publicUrl}/skills/growth/SKILL.md`, name: 'growth-skill', title: 'Growth skill (optional)', description: 'Exploration ideas; never changes tool inputs.', text: growthSkillMarkdown(publicUrl) },
  ]
  const instructions =
    `growthdesk: growth opportunities, a review pipeline, daily metrics, project cards and memories. ` +
    `Call list_projects to find a project, then pass its id or slug as \`project\`. Read the resource ${publicUrl}/SKILL.md for details.`
  const allowedOrigins = mcpAllowedOrigins(publicUrl, options.allowedOrigins)
  const allowedHosts = mcpAllowedHosts(publicUrl)

  // The transport parses the body itself, so malformed JSON becomes a JSON-RPC -32700 error.
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
      const disabled = await app.repos.workspaces.disabledTools(principal.workspaceId)
      if (!app.registry.names().includes(name) || disabled.includes(name)) {
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`)
      }
      try {
        const result = (await app.registry.call(name, args ?? {}, { principal, projectRef, log: request.log, asTool: true })) as Record<string, unknown>
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
    onRequest: async (request) => {
      // DNS-rebinding protection: only our own host names, and only allowed browser origins.
      const origin = request.headers.origin
      if (origin !== undefined && !allowedOrigins.has(origin)) throw appError('Forbidden', `Origin ${origin} is not allowed to use this MCP endpoint.`)
      const host = request.headers.host
      if (!host || !allowedHosts.has(host.toLowerCase())) throw appError('Forbidden', `Host ${host ?? '(none)'} is not served here.`)
    },
    preHandler: app.authenticate('mcp'),
  }, async (request, reply) => {
    const server = newServer(request)
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      const headers = new Headers()
      for (const [k, v] of Object.entries(request.headers)) if (typeof v === 'string') headers.set(k, v)
      // We always answer with JSON; clients that only accept JSON are served too.
      headers.set('accept', 'application/json, text/event-stream')
      headers.delete('content-length')
      const response = await transport.handleRequest(
        new Request(`${publicUrl}/mcp`, { method: 'POST', headers, body: typeof request.body === 'string' ? request.body : '' })
      )
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
