// The official MCP conformance suite's fixtures (`@modelcontextprotocol/conformance`: the tools,
// prompts, resources and diagnostics its server scenarios call by name), served beside
// growthdesk's own only when MCP_CONFORMANCE_FIXTURES=true (config.ts refuses it in production):
// `npm run conformance` (bin/conformance.ts) turns it on to run every scored scenario.
//
// - Both eras: tools test_simple_text, test_image_content, test_audio_content,
//   test_embedded_resource, test_multiple_content_types, test_error_handling,
//   test_tool_with_progress; resources test://static-text, test://static-binary,
//   test://watched-resource and the template test://template/{id}/data; prompts
//   test_simple_prompt, test_prompt_with_arguments, test_prompt_with_embedded_resource,
//   test_prompt_with_image; completion/complete.
// - 2026-07-28: the multi-round-trip (input_required) tools and prompt, test_missing_capability
//   (-32021), test_streaming_elicitation and test_logging_tool.
// - 2025-11-25: test_tool_with_logging, test_sampling, test_elicitation and the SEP-1034/1330
//   elicitation tools, which ask the client mid-call; logging/setLevel and resources/subscribe.
//   A server's request needs the client's answer to reach the same server: 2025 clients that
//   `initialize` get a session (Mcp-Session-Id) whose requests one server and transport serve,
//   with event-stream answers. Without the fixtures the endpoint stays stateless.
//
// Growthdesk's own tools, resources and prompts are served as ever; the fixtures wrap their handlers.
import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import {
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  acceptedContent,
  LOG_LEVEL_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type AuthInfo,
  type CallToolResult,
  type ElicitRequestFormParams,
  type HandlerResultTypeMap,
  type RequestMethod,
  type RequestTypeMap,
  type ServerCapabilities,
  type GetPromptResult,
  type InputRequiredResult,
  type ReadResourceResult,
  type Server,
  type ServerContext,
  type Tool,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import { isPlainObject } from './mcp-era.ts'

type Era = 'legacy' | 'modern'

type Handler<M extends RequestMethod> = (request: RequestTypeMap[M], ctx: ServerContext) => Promise<HandlerResultTypeMap[M]>

/** The handlers routes/mcp-server.ts gives every per-request server, built once: the fixtures wrap them. */
export interface McpHandlers {
  listTools: Handler<'tools/list'>
  callTool: Handler<'tools/call'>
  listResources: Handler<'resources/list'>
  listResourceTemplates: Handler<'resources/templates/list'>
  readResource: Handler<'resources/read'>
  listPrompts: Handler<'prompts/list'>
  getPrompt: Handler<'prompts/get'>
}

/**
 * What MCP_CONFORMANCE_FIXTURES=true adds to every per-request server of routes/mcp-server.ts:
 * capabilities, handlers that wrap growthdesk's own, and the 2025 sessions its scenarios need.
 */
export interface McpFixtures {
  capabilities(era: 'legacy' | 'modern'): ServerCapabilities
  install(server: Server, era: 'legacy' | 'modern', handlers: McpHandlers): void
  /** A 2025 request it serves (a session's), or undefined: the stateless path answers it. */
  legacy(request: Request, authInfo: AuthInfo, parsedBody: unknown, newServer: () => Server): Promise<Response | undefined>
  close(): Promise<void>
}

/** A 1×1 PNG and a silent WAV: the smallest image and audio the scenarios accept. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const WAV = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA='

const NO_ARGUMENTS = { type: 'object' as const, properties: {} }
const text = (value: string) => ({ type: 'text' as const, text: value })
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The tools of both eras, then each era's own. */
const tools = {
  both: [
    { name: 'test_simple_text', description: 'Conformance fixture: a simple text result.', inputSchema: NO_ARGUMENTS },
    { name: 'test_image_content', description: 'Conformance fixture: an image result.', inputSchema: NO_ARGUMENTS },
    { name: 'test_audio_content', description: 'Conformance fixture: an audio result.', inputSchema: NO_ARGUMENTS },
    { name: 'test_embedded_resource', description: 'Conformance fixture: an embedded resource.', inputSchema: NO_ARGUMENTS },
    { name: 'test_multiple_content_types', description: 'Conformance fixture: text, image and resource content.', inputSchema: NO_ARGUMENTS },
    { name: 'test_error_handling', description: 'Conformance fixture: a tool error (isError).', inputSchema: NO_ARGUMENTS },
    { name: 'test_tool_with_progress', description: 'Conformance fixture: three progress notifications, then a result.', inputSchema: NO_ARGUMENTS },
  ],
  legacy: [
    { name: 'test_tool_with_logging', description: 'Conformance fixture: three log notifications, then a result.', inputSchema: NO_ARGUMENTS },
    { name: 'test_sampling', description: 'Conformance fixture: asks the client to sample.', inputSchema: { type: 'object' as const, properties: { prompt: { type: 'string', description: 'The prompt to send to the LLM' } }, required: ['prompt'] } },
    { name: 'test_elicitation', description: 'Conformance fixture: asks the user for input.', inputSchema: { type: 'object' as const, properties: { message: { type: 'string', description: 'The message to show the user' } }, required: ['message'] } },
    { name: 'test_elicitation_sep1034_defaults', description: 'Conformance fixture: elicitation with defaults (SEP-1034).', inputSchema: NO_ARGUMENTS },
    { name: 'test_elicitation_sep1330_enums', description: 'Conformance fixture: elicitation with enum schemas (SEP-1330).', inputSchema: NO_ARGUMENTS },
  ],
  modern: [
    { name: 'test_missing_capability', description: 'Conformance diagnostic: needs the sampling capability (-32021 without it).', inputSchema: NO_ARGUMENTS },
    { name: 'test_streaming_elicitation', description: 'Conformance diagnostic: a progress notification on the response stream, then a result.', inputSchema: NO_ARGUMENTS },
    { name: 'test_logging_tool', description: 'Conformance diagnostic: logs only when the request sets a log level.', inputSchema: NO_ARGUMENTS },
    ...['elicitation', 'sampling', 'list_roots', 'request_state', 'multiple_inputs', 'multi_round', 'tampered_state', 'capabilities'].map((kind) => ({
      name: `test_input_required_result_${kind}`,
      description: `Conformance fixture: an input_required result (${kind.replaceAll('_', ' ')}).`,
      inputSchema: NO_ARGUMENTS,
    })),
  ],
} satisfies Record<'both' | Era, Tool[]>

const resources = [
  { uri: 'test://static-text', name: 'static-text', title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain' },
  { uri: 'test://static-binary', name: 'static-binary', title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png' },
  { uri: 'test://watched-resource', name: 'watched-resource', title: 'Watched Resource', description: 'A resource to subscribe to', mimeType: 'text/plain' },
]
const TEMPLATE = /^test:\/\/template\/([^/]+)\/data$/
const resourceTemplates = [{ uriTemplate: 'test://template/{id}/data', name: 'template', title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' }]

const prompts = {
  both: [
    { name: 'test_simple_prompt', title: 'Simple Test Prompt', description: 'A simple prompt without arguments' },
    {
      name: 'test_prompt_with_arguments',
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      arguments: [{ name: 'arg1', description: 'First test argument', required: true }, { name: 'arg2', description: 'Second test argument', required: true }],
    },
    {
      name: 'test_prompt_with_embedded_resource',
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
    },
    { name: 'test_prompt_with_image', title: 'Prompt With Image', description: 'A prompt that includes image content' },
  ],
  modern: [{ name: 'test_input_required_result_prompt', description: 'Conformance fixture: a prompt that needs elicitation input.' }],
}

/** Asks the client for input on the call's own stream (ctx.mcpReq.send relates it to the call). */
const elicit = (ctx: ServerContext, params: ElicitRequestFormParams) => ctx.mcpReq.send({ method: 'elicitation/create', params })

/** A form elicitation of one field of `type`. */
const elicitField = (message: string, field: string, type: 'string' | 'boolean') =>
  inputRequired.elicit({ message, requestedSchema: { type: 'object', properties: { [field]: type === 'string' ? { type } : { type } }, required: [field] } })

/** The fixtures: what mcp-server.ts adds to every per-request server, and the 2025 sessions. */
export function conformanceFixtures(app: FastifyInstance): McpFixtures {
  // requestState is signed: a tampered one is refused (the scenarios tamper with one).
  const codec = createRequestStateCodec<{ kind: string; round?: number; name?: string }>({ key: randomBytes(32) })
  const verified = async (ctx: ServerContext, kind: string) => {
    const state = ctx.mcpReq.requestState<string>()
    if (state === undefined) return undefined
    const payload = await codec.verify(state, ctx).catch(() => {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState integrity check failed')
    })
    if (payload.kind !== kind) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'requestState belongs to another tool')
    return payload
  }

  async function callTool(server: Server, name: string, args: Record<string, unknown>, ctx: ServerContext): Promise<CallToolResult | InputRequiredResult | undefined> {
    const responses = ctx.mcpReq.inputResponses
    switch (name) {
      case 'test_simple_text': return { content: [text('This is a simple text response for testing.')] }
      case 'test_image_content': return { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] }
      case 'test_audio_content': return { content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }] }
      case 'test_embedded_resource':
        return { content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }] }
      case 'test_multiple_content_types':
        return {
          content: [
            text('Multiple content types test:'),
            { type: 'image', data: PNG, mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } },
          ],
        }
      case 'test_error_handling': return { isError: true, content: [text('This tool intentionally returns an error for testing')] }
      case 'test_tool_with_progress': {
        const progressToken = ctx.mcpReq._meta?.progressToken ?? 0
        for (const progress of [0, 50, 100]) {
          await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` } })
          if (progress < 100) await sleep(50)
        }
        return { content: [text(String(progressToken))] }
      }
      case 'test_tool_with_logging':
        for (const data of ['Tool execution started', 'Tool processing data', 'Tool execution completed']) {
          await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } })
          await sleep(50)
        }
        return { content: [text('Tool with logging executed successfully')] }
      case 'test_sampling': {
        // ctx.mcpReq.send relates the request to the call, so it goes out on the call's own stream
        // (requestSampling and elicitInput send on the session's GET stream, which is not served).
        const result = await ctx.mcpReq.send({ method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: text(String(args.prompt ?? '')) }], maxTokens: 100 } })
        const content = Array.isArray(result.content) ? result.content[0] : result.content
        return { content: [text(`LLM response: ${content?.type === 'text' ? content.text : 'No response'}`)] }
      }
      case 'test_elicitation': {
        const result = await elicit(ctx, {
          message: String(args.message ?? ''),
          requestedSchema: { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
        })
        return { content: [text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)] }
      }
      case 'test_elicitation_sep1034_defaults': {
        const result = await elicit(ctx, {
          message: 'Please review and update the form fields with defaults',
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', description: 'User name', default: 'John Doe' },
              age: { type: 'integer', description: 'User age', default: 30 },
              score: { type: 'number', description: 'User score', default: 95.5 },
              status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
              verified: { type: 'boolean', description: 'Verification status', default: true },
            },
            required: [],
          },
        })
        return { content: [text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)] }
      }
      case 'test_elicitation_sep1330_enums': {
        const result = await elicit(ctx, {
          message: 'Please select options from the enum fields',
          requestedSchema: {
            type: 'object',
            properties: {
              untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
              titledSingle: {
                type: 'string',
                description: 'Select one option with titles',
                oneOf: [{ const: 'value1', title: 'First Option' }, { const: 'value2', title: 'Second Option' }, { const: 'value3', title: 'Third Option' }],
              },
              legacyEnum: { type: 'string', description: 'Select one option (legacy)', enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] },
              untitledMulti: { type: 'array', description: 'Select multiple options', minItems: 1, maxItems: 3, items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
              titledMulti: {
                type: 'array',
                description: 'Select multiple options with titles',
                minItems: 1,
                maxItems: 3,
                items: { anyOf: [{ const: 'value1', title: 'First Choice' }, { const: 'value2', title: 'Second Choice' }, { const: 'value3', title: 'Third Choice' }] },
              },
            },
            required: [],
          },
        })
        return { content: [text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`)] }
      }
      case 'test_missing_capability':
        if (!server.getClientCapabilities()?.sampling) throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { sampling: {} } })
        return { content: [text('Success')] }
      case 'test_streaming_elicitation': {
        const progressToken = ctx.mcpReq._meta?.progressToken
        if (progressToken !== undefined) await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 50, total: 100 } })
        return { content: [text('Streaming complete')] }
      }
      case 'test_logging_tool':
        // No notifications/message unless the request named a log level (2026-07-28).
        if ((ctx.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY] !== undefined) await ctx.mcpReq.log('info', 'Diagnostic trace logging activated')
        return { content: [text('Logging evaluated')] }
      case 'test_input_required_result_elicitation': {
        const name = acceptedContent(responses, 'user_name')?.name
        if (typeof name === 'string') return { content: [text(`Hello, ${name}!`)] }
        return inputRequired({ inputRequests: { user_name: elicitField('What is your name?', 'name', 'string') } })
      }
      case 'test_input_required_result_sampling': {
        const answer = inputResponse(responses, 'capital_question')
        if (answer.kind === 'sampling') {
          const content = Array.isArray(answer.result.content) ? answer.result.content[0] : answer.result.content
          return { content: [text(`Sampling result: ${content?.type === 'text' ? content.text : 'no response'}`)] }
        }
        return inputRequired({ inputRequests: { capital_question: inputRequired.createMessage({ messages: [{ role: 'user', content: text('What is the capital of France?') }], maxTokens: 100 }) } })
      }
      case 'test_input_required_result_list_roots': {
        const answer = inputResponse(responses, 'client_roots')
        if (answer.kind === 'roots') return { content: [text(`Found ${answer.roots.length} root(s): ${answer.roots.map((r) => r.uri).join(', ')}`)] }
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } })
      }
      case 'test_input_required_result_request_state': {
        const state = await verified(ctx, 'request-state')
        if (state && acceptedContent(responses, 'confirm') !== undefined) return { content: [text('state-ok: requestState validated')] }
        return inputRequired({ inputRequests: { confirm: elicitField('Please confirm', 'ok', 'boolean') }, requestState: await codec.mint({ kind: 'request-state' }) })
      }
      case 'test_input_required_result_multiple_inputs': {
        const state = await verified(ctx, 'multiple-inputs')
        const name = acceptedContent(responses, 'user_name')?.name
        const greeting = inputResponse(responses, 'greeting')
        const roots = inputResponse(responses, 'client_roots')
        if (state && typeof name === 'string' && greeting.kind === 'sampling' && roots.kind === 'roots') {
          const content = Array.isArray(greeting.result.content) ? greeting.result.content[0] : greeting.result.content
          return { content: [text(`Name: ${name}; Greeting: ${content?.type === 'text' ? content.text : ''}; Roots: ${roots.roots.length}`)] }
        }
        return inputRequired({
          inputRequests: {
            user_name: elicitField('What is your name?', 'name', 'string'),
            greeting: inputRequired.createMessage({ messages: [{ role: 'user', content: text('Generate a greeting') }], maxTokens: 50 }),
            client_roots: inputRequired.listRoots(),
          },
          requestState: await codec.mint({ kind: 'multiple-inputs' }),
        })
      }
      case 'test_input_required_result_multi_round': {
        const state = await verified(ctx, 'multi-round')
        const name = acceptedContent(responses, 'step1')?.name
        if (state?.round === 1 && typeof name === 'string') {
          return inputRequired({
            inputRequests: { step2: elicitField('Step 2: What is your favorite color?', 'color', 'string') },
            requestState: await codec.mint({ kind: 'multi-round', round: 2, name }),
          })
        }
        const color = acceptedContent(responses, 'step2')?.color
        if (state?.round === 2 && typeof color === 'string') return { content: [text(`Multi-round complete for ${state.name} who likes ${color}`)] }
        return inputRequired({ inputRequests: { step1: elicitField('Step 1: What is your name?', 'name', 'string') }, requestState: await codec.mint({ kind: 'multi-round', round: 1 }) })
      }
      case 'test_input_required_result_tampered_state': {
        const state = await verified(ctx, 'tamper-test')
        if (state && acceptedContent(responses, 'confirm') !== undefined) return { content: [text('integrity-ok: state verified')] }
        return inputRequired({ inputRequests: { confirm: elicitField('Please confirm', 'ok', 'boolean') }, requestState: await codec.mint({ kind: 'tamper-test' }) })
      }
      case 'test_input_required_result_capabilities': {
        if (responses && Object.keys(responses).length > 0) return { content: [text(`capabilities-ok: received ${Object.keys(responses).join(',')}`)] }
        // Only what the client declared it can do.
        const capabilities = server.getClientCapabilities() ?? {}
        const inputRequests = {
          ...(capabilities.elicitation ? { elicit_input: elicitField('Elicitation input', 'value', 'string') } : {}),
          ...(capabilities.sampling ? { sample_input: inputRequired.createMessage({ messages: [{ role: 'user', content: text('Sample request') }], maxTokens: 50 }) } : {}),
        }
        if (Object.keys(inputRequests).length === 0) return { content: [text('No supported capabilities declared')] }
        return inputRequired({ inputRequests, requestState: await codec.mint({ kind: 'capabilities-test' }) })
      }
      default: return undefined
    }
  }

  function readResource(uri: string): ReadResourceResult | undefined {
    if (uri === 'test://static-text') return { contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }
    if (uri === 'test://static-binary') return { contents: [{ uri, mimeType: 'image/png', blob: PNG }] }
    if (uri === 'test://watched-resource') return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched resource content' }] }
    const id = TEMPLATE.exec(uri)?.[1]
    if (id !== undefined) return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }] }
    return undefined
  }

  function getPrompt(name: string, args: Record<string, string>, ctx: ServerContext): GetPromptResult | InputRequiredResult | undefined {
    switch (name) {
      case 'test_simple_prompt': return { messages: [{ role: 'user', content: text('This is a simple prompt for testing.') }] }
      case 'test_prompt_with_arguments': return { messages: [{ role: 'user', content: text(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`) }] }
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: args.resourceUri ?? 'test://example-resource', mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: text('Please process the embedded resource above.') },
          ],
        }
      case 'test_prompt_with_image':
        return { messages: [{ role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } }, { role: 'user', content: text('Please analyze the image above.') }] }
      case 'test_input_required_result_prompt': {
        const context = acceptedContent(ctx.mcpReq.inputResponses, 'user_context')?.context
        if (typeof context === 'string') return { messages: [{ role: 'user', content: text(`Prompt with context: ${context}`) }] }
        return inputRequired({ inputRequests: { user_context: elicitField('What context should the prompt use?', 'context', 'string') } })
      }
      default: return undefined
    }
  }

  // 2025 sessions: at most SESSIONS open, the oldest closed first (the suite opens one a scenario).
  const SESSIONS = 64
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>()
  const sessionNotFound = () =>
    new Response(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }), { status: 404, headers: { 'content-type': 'application/json' } })

  return {
    capabilities(era) {
      return era === 'legacy' ? { completions: {}, logging: {}, resources: { subscribe: true } } : { completions: {} }
    },

    install(server, era, handlers: McpHandlers) {
      const ownTools = [...tools.both, ...tools[era]]
      const ownPrompts = [...prompts.both, ...(era === 'modern' ? prompts.modern : [])]
      server.setRequestHandler('tools/list', async (req, ctx) => {
        const list = await handlers.listTools(req, ctx)
        return { ...list, tools: [...list.tools, ...ownTools] }
      })
      server.setRequestHandler('tools/call', async (req, ctx) => {
        if (!ownTools.some((t) => t.name === req.params.name)) return handlers.callTool(req, ctx)
        return (await callTool(server, req.params.name, req.params.arguments ?? {}, ctx))!
      })
      server.setRequestHandler('resources/list', async (req, ctx) => {
        const list = await handlers.listResources(req, ctx)
        return { ...list, resources: [...list.resources, ...resources] }
      })
      server.setRequestHandler('resources/templates/list', async (req, ctx) => {
        const list = await handlers.listResourceTemplates(req, ctx)
        return { ...list, resourceTemplates: [...list.resourceTemplates, ...resourceTemplates] }
      })
      server.setRequestHandler('resources/read', async (req, ctx) => readResource(req.params.uri) ?? handlers.readResource(req, ctx))
      server.setRequestHandler('prompts/list', async (req, ctx) => {
        const list = await handlers.listPrompts(req, ctx)
        return { ...list, prompts: [...list.prompts, ...ownPrompts] }
      })
      server.setRequestHandler('prompts/get', async (req, ctx) => {
        if (!ownPrompts.some((p) => p.name === req.params.name)) return handlers.getPrompt(req, ctx)
        return getPrompt(req.params.name, req.params.arguments ?? {}, ctx)!
      })
      server.setRequestHandler('completion/complete', async () => ({ completion: { values: [], total: 0, hasMore: false } }))
      if (era === 'legacy') {
        server.setRequestHandler('logging/setLevel', async () => ({}))
        server.setRequestHandler('resources/subscribe', async () => ({}))
        server.setRequestHandler('resources/unsubscribe', async () => ({}))
      }
    },

    async legacy(request: Request, authInfo: AuthInfo, parsedBody: unknown, newServer: () => Server) {
      const id = request.headers.get('mcp-session-id')
      if (id !== null) {
        const transport = sessions.get(id)
        return transport ? transport.handleRequest(request, { authInfo, parsedBody }) : sessionNotFound()
      }
      if (!isPlainObject(parsedBody) || parsedBody.method !== 'initialize') return undefined
      const server = newServer()
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          sessions.set(sessionId, transport)
          for (const [oldest, old] of sessions) {
            if (sessions.size <= SESSIONS) break
            sessions.delete(oldest)
            old.close().catch((err: unknown) => app.log.debug({ err }, 'a conformance session failed to close'))
          }
        },
        onsessionclosed: (sessionId) => {
          sessions.delete(sessionId)
        },
      })
      await server.connect(transport)
      return transport.handleRequest(request, { authInfo, parsedBody })
    },

    async close() {
      await Promise.all([...sessions.values()].map((t) => t.close()))
      sessions.clear()
    },
  }
}
