// The fast lane for MCP `tools/call` (issue 14). The SDK (routes/mcp-server.ts) is the
// implementation of record for everything on POST /mcp; this lane is an optimization beside it.
// For an ordinary tool call — nothing in the request that the SDK could answer with anything but
// the tool's result — it runs the tool and writes the JSON-RPC response itself, skipping the
// per-request Web Request/Response, Server and transport, and the zod validation of the request
// and of the result, which cost about as much as the tool call itself. Everything else returns
// `undefined` here and the route hands the request to the SDK exactly as before: any other
// method, notifications, batches, unusual members or `_meta` entries, header mismatches,
// unsupported versions, unknown or disabled tools (the SDK's -32602). Its answers are held
// byte-identical to the SDK's (status, headers, body) by test/mcp/fast-lane.test.ts, which sends
// a corpus through both paths; a condition that cannot be shown identical belongs to the SDK.
//
// It imports nothing of the SDK: routes/mcp-server.ts builds the lane on the first MCP request,
// with the SDK's constants. `buildApp({ mcpFastLane: false })` sends every request to the SDK.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { UnknownToolError, type Call } from '../core/operations.ts'
import { errorResponse } from '../core/errors.ts'
import { escapeText, type EscapedText } from '../core/json-escape.ts'
import { isPlainObject, PROTOCOL_VERSION_META_KEY } from './mcp-era.ts'

/** A tools/call result: the one definition both paths send (the SDK through its encoder). */
export type ToolCallResult =
  | { content: [{ type: 'text'; text: string }]; structuredContent: Record<string, unknown>; isError?: undefined }
  | { content: [{ type: 'text'; text: string }]; isError: true; structuredContent?: undefined }

/** What a tool call comes to: its result as the output schema writes it, or the REST error object's JSON. */
type ToolCallOutcome = { ok: true; text: string } | { ok: false; text: string }

/** `registry.callTool`, with a failure as the REST error object. An unknown or disabled tool is
 * not a failed call in MCP but a protocol error: UnknownToolError is thrown on. */
async function toolCallOutcome(app: FastifyInstance, call: Call, name: string, args: Record<string, unknown> | undefined): Promise<ToolCallOutcome> {
  try {
    // The text is what the output schema writes, byte for byte what POST /v1/tools/:name returns.
    return { ok: true, text: await app.registry.callTool(name, args ?? {}, call) }
  } catch (err) {
    if (err instanceof UnknownToolError) throw err
    const { body, internal } = errorResponse(err)
    if (internal) call.log.error({ err }, 'tool call failed')
    return { ok: false, text: JSON.stringify(body) }
  }
}

/** Runs a tool by name and makes its result; UnknownToolError for a tool the workspace has not. */
export async function toolCallResult(app: FastifyInstance, call: Call, name: string, args: Record<string, unknown> | undefined): Promise<ToolCallResult> {
  const { ok, text } = await toolCallOutcome(app, call, name, args)
  return ok
    ? { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> }
    // The REST error object as text. No structuredContent: it would have to match the
    // tool's outputSchema, and the 2025 SDK client validates it even on errors.
    : { content: [{ type: 'text', text }], isError: true }
}

/** The start of a successful result's answer, up to the opening quote of its text block. */
const OK_HEAD = Buffer.from('{"result":{"content":[{"type":"text","text":"')
/** Between the text block's closing quote and the structured content. */
const OK_MIDDLE = Buffer.from('"}],"structuredContent":')
/**
 * A successful result's answer as bytes: `{"result":{"content":[{"type":"text","text":<the text as
 * a JSON string>}],"structuredContent":<the text>` then `tail`: the bytes of answerText's string.
 * The text block's escape is core/json-escape.ts's (a page escaped as a string by JSON.stringify
 * is slower, and is then measured, flattened and encoded again by the HTTP layer), and the body
 * goes out as it is. Undefined when the text has a byte that needs more than a backslash: then
 * answerText. `escape` is another implementation's, for bench:mcp-answer. Exported for
 * test/mcp/fast-lane-bytes.test.ts.
 */
export function okAnswerBytes(text: string, tail: string, escape: (text: string) => EscapedText | undefined = escapeText): Buffer | undefined {
  const escaped = escape(text)
  if (escaped === undefined) return undefined
  const out = Buffer.allocUnsafe(OK_HEAD.length + escaped.escaped.length + OK_MIDDLE.length + escaped.raw.length + Buffer.byteLength(tail))
  let p = OK_HEAD.copy(out, 0)
  out.set(escaped.escaped, p)
  p += escaped.escaped.length
  p += OK_MIDDLE.copy(out, p)
  out.set(escaped.raw, p)
  p += escaped.raw.length
  out.write(tail, p, 'utf8')
  return out
}

/**
 * The answer as JSON text, written without parsing the tool's text again: its structuredContent
 * is the text itself. That is what `JSON.stringify` of the SDK's answer writes, because the
 * registry's serializers (fast-json-stringify) write what JSON.stringify writes for the same value
 * — members in order, numbers and strings escaped alike (a string with anything to escape goes
 * through JSON.stringify itself) — so JSON.stringify(JSON.parse(text)) is text;
 * test/mcp/fast-lane.test.ts compares the bytes with the SDK's. `tail` closes the result (the
 * modern era's members) and the JSON-RPC response.
 */
function answerText(outcome: ToolCallOutcome, tail: string): string {
  const content = `{"result":{"content":[{"type":"text","text":${JSON.stringify(outcome.text)}}]`
  return outcome.ok ? `${content},"structuredContent":${outcome.text}${tail}` : `${content},"isError":true${tail}`
}

/** The one revision of the modern era the lane serves (the SDK's only one today). */
const MODERN_VERSION = '2026-07-28'
const CLIENT_CAPABILITIES_META_KEY = 'io.modelcontextprotocol/clientCapabilities'
const CLIENT_INFO_META_KEY = 'io.modelcontextprotocol/clientInfo'
/** Client capabilities the lane accepts, as `{}` (roots also as `{listChanged: boolean}`; and
 * `extensions`, see plainExtensions): each is valid in the SDK's ClientCapabilities schema and
 * none changes how a tool call is served. */
const PLAIN_CAPABILITIES = new Set(['sampling', 'elicitation', 'roots'])

/**
 * `extensions` (SEP-1724) as hosts of MCP App views declare it, e.g. `{"io.modelcontextprotocol/ui":
 * {"mimeTypes": ["text/html;profile=mcp-app"]}}`: each extension's settings a flat object of
 * strings, numbers, booleans, null or arrays of strings. Valid in the SDK's schema (a record of
 * JSON objects), and nothing a tool call depends on; anything richer is the SDK's to judge.
 */
function plainExtensions(value: unknown): boolean {
  if (!isPlainObject(value) || Object.hasOwn(value, '__proto__')) return false
  for (const id in value) {
    const settings = value[id]
    if (!isPlainObject(settings) || Object.hasOwn(settings, '__proto__')) return false
    for (const key in settings) {
      const v = settings[key]
      if (v !== null && !['string', 'number', 'boolean'].includes(typeof v) && !(Array.isArray(v) && v.every((e) => typeof e === 'string'))) return false
    }
  }
  return true
}

function onlyKeys(value: Record<string, unknown>, allowed: readonly string[]): boolean {
  for (const key in value) if (!allowed.includes(key)) return false
  return true
}

/** `_meta` of a 2026-07-28 call as the SDK's envelope schema certainly accepts it: the protocol
 * version, client capabilities, and at most a plain client name and version. */
function ordinaryEnvelope(meta: unknown): boolean {
  if (!isPlainObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_VERSION) return false
  if (!onlyKeys(meta, [PROTOCOL_VERSION_META_KEY, CLIENT_CAPABILITIES_META_KEY, CLIENT_INFO_META_KEY])) return false
  const capabilities = meta[CLIENT_CAPABILITIES_META_KEY]
  if (!isPlainObject(capabilities)) return false
  for (const key in capabilities) {
    const value = capabilities[key]
    if (key === 'extensions') {
      if (!plainExtensions(value)) return false
      continue
    }
    if (!PLAIN_CAPABILITIES.has(key) || !isPlainObject(value)) return false
    const size = Object.keys(value).length
    if (size > 0 && !(key === 'roots' && size === 1 && typeof value.listChanged === 'boolean')) return false
  }
  const info = meta[CLIENT_INFO_META_KEY]
  return info === undefined || (isPlainObject(info) && onlyKeys(info, ['name', 'version']) && typeof info.name === 'string' && typeof info.version === 'string')
}

export type FastLane = (message: unknown, headers: FastifyRequest['headers'], call: Call, era: 'legacy' | 'modern') => Promise<Buffer | string | undefined>

/**
 * The lane: the response body, bytes or text (sent with status 200 and `Content-Type: application/json`, as
 * the SDK sends it), or undefined when the SDK must answer. `era` is certainEra's answer
 * (routes/mcp-era.ts). `legacyVersions` are the MCP-Protocol-Version values the SDK's 2025
 * transport accepts; `serverInfo` is what the SDK stamps into 2026-07-28 results' `_meta`
 * under `serverInfoKey`.
 */
export function createFastLane(app: FastifyInstance, options: { legacyVersions: readonly string[]; serverInfoKey: string; serverInfo: { name: string; version: string } }): FastLane {
  const { legacyVersions, serverInfoKey, serverInfo } = options
  // The tools whose results are JSON objects (all of them today): the SDK adds a text block to
  // any other structuredContent, which the lane does not reproduce. Registry names are
  // snake_case, so an Mcp-Name equal to one is never the SDK's Base64 sentinel.
  const toolNames = new Set(app.registry.contracts().filter((c) => (c.output_schema as { type?: unknown }).type === 'object').map((c) => c.name))
  const modernExtra = `,"resultType":"complete","_meta":${JSON.stringify({ [serverInfoKey]: serverInfo })}`

  return async (message, headers, call, era) => {
    // The SDK's media-type check passes this exact value without parsing it.
    if (headers['content-type'] !== 'application/json') return undefined
    if (!isPlainObject(message) || message.jsonrpc !== '2.0' || message.method !== 'tools/call') return undefined
    if (!onlyKeys(message, ['jsonrpc', 'id', 'method', 'params'])) return undefined
    const id = message.id
    if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined
    const params = message.params
    if (!isPlainObject(params)) return undefined
    const { name, arguments: args } = params
    if (typeof name !== 'string' || !toolNames.has(name)) return undefined
    // A `__proto__` argument is dropped by the SDK's record parsing: its answer, not ours.
    if (args !== undefined && (!isPlainObject(args) || Object.hasOwn(args, '__proto__'))) return undefined
    const version = headers['mcp-protocol-version']
    if (era === 'legacy') {
      if (!onlyKeys(params, ['name', 'arguments'])) return undefined
      if (version !== undefined && (typeof version !== 'string' || !legacyVersions.includes(version))) return undefined
    } else {
      if (!onlyKeys(params, ['name', 'arguments', '_meta']) || !ordinaryEnvelope(params._meta)) return undefined
      // Exact values: the SDK trims optional whitespace and decodes sentinels; such a request is its.
      if (version !== MODERN_VERSION || headers['mcp-method'] !== 'tools/call' || headers['mcp-name'] !== name) return undefined
    }
    // The members in the order the SDK's result schema writes them. Not validated again: the
    // SDK's check of a tools/call result (its wire schema: content blocks, an optional object
    // structuredContent, an optional boolean isError) passes this shape by construction.
    // structuredContent is not checked against the tool's outputSchema by the low-level Server
    // either (only the SDK's McpServer does that) and needs no check: it is the output schema's
    // own serialization of the result (registry.callTool writes only what the schema declares;
    // tests build the app with checkOutputs, which fails any handler result outside it).
    // 2026-07-28: the SDK's encode contract stamps the result type and the server's identity.
    let outcome: ToolCallOutcome
    try {
      outcome = await toolCallOutcome(app, call, name, args as Record<string, unknown> | undefined)
    } catch (err) {
      // An unknown or disabled tool is the SDK's protocol error (-32602), answered there.
      if (err instanceof UnknownToolError) return undefined
      throw err
    }
    const tail = `${era === 'modern' ? modernExtra : ''}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
    return (outcome.ok && okAnswerBytes(outcome.text, tail)) || answerText(outcome, tail)
  }
}
