// Which era an MCP request belongs to, when that is certain from a glance at the body and the
// MCP-Protocol-Version header: the SDK's classifier (`isLegacyRequest`, run again inside
// `createMcpHandler`) validates the whole message with zod to decide, which costs more than the
// tool call's own MCP work. `certainEra` answers only where the SDK's rules (its body-primary
// `classifyInboundRequest`) leave no doubt, and `undefined` everywhere else, which the caller
// hands to the SDK's own classifier; test/mcp/era.test.ts holds it to the SDK's answer.
// Deliberately free of SDK imports: this module loads with the route, the SDK on first use.

/** The `_meta` key that claims a 2026-07-28 (modern) request envelope. */
export const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion'
/** Revision identifiers are ISO dates: this one and later are the modern era. */
const FIRST_MODERN_PROTOCOL_VERSION = '2026-07-28'
const REVISION = /^\d{4}-\d{2}-\d{2}$/

/** A JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/**
 * 'legacy' when the SDK would serve the request as 2025 traffic, 'modern' when it would not
 * (the 2026-07-28 handler then serves it, or answers its error), undefined when only the SDK
 * can tell. `message` is the parsed body; `protocolVersionHeader` the raw header value.
 *
 * - modern: a request or notification (a string `method`, not `initialize`) whose params carry
 *   the envelope claim (`_meta["io.modelcontextprotocol/protocolVersion"]`). The SDK classifies
 *   from the body: whatever the header, such a message is modern or one of the modern path's
 *   rejections (invalid envelope, header/body mismatch), never legacy.
 * - legacy: a well-formed JSON-RPC request or notification (only `jsonrpc` "2.0", an optional
 *   string or integer `id`, a string `method`, optional object `params`) with no `_meta` at all,
 *   sent with no MCP-Protocol-Version header or one naming a pre-2026 revision.
 */
export function certainEra(message: unknown, protocolVersionHeader: string | undefined): 'legacy' | 'modern' | undefined {
  if (!isPlainObject(message) || typeof message.method !== 'string') return undefined
  const params = message.params
  const meta = isPlainObject(params) ? params._meta : undefined
  if (isPlainObject(meta) && Object.hasOwn(meta, PROTOCOL_VERSION_META_KEY)) return message.method === 'initialize' ? undefined : 'modern'
  if (protocolVersionHeader !== undefined && !(REVISION.test(protocolVersionHeader) && protocolVersionHeader < FIRST_MODERN_PROTOCOL_VERSION)) return undefined
  if (message.jsonrpc !== '2.0') return undefined
  const id = message.id
  if (id !== undefined && typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined
  if (params !== undefined && (!isPlainObject(params) || Object.hasOwn(params, '_meta'))) return undefined
  for (const key of Object.keys(message)) {
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'method' && key !== 'params') return undefined
  }
  return 'legacy'
}

/** The 2025-era revisions served (`initialize`, then stateless requests), newest first. */
export const LEGACY_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const
/** Every revision this endpoint serves, newest first: what an unsupported version's error lists. */
export const SERVED_PROTOCOL_VERSIONS = [FIRST_MODERN_PROTOCOL_VERSION, ...LEGACY_PROTOCOL_VERSIONS] as const

/**
 * The answer to a 2025-era request whose MCP-Protocol-Version header names a revision this
 * endpoint does not serve, or undefined when the header is fine (or absent) or the message is
 * not a request of that era's to judge (initialize negotiates its version in the body). The SDK's
 * transport would answer `id: null` with the SDK's own version list; this answer echoes the
 * request's id and lists exactly the served revisions, 2026-07-28 included: the 2026-07-28
 * UnsupportedProtocolVersionError (-32022) with `data: {supported, requested}`, HTTP 400.
 */
export function unsupportedVersionAnswer(message: unknown, protocolVersionHeader: string | null | undefined): string | undefined {
  if (protocolVersionHeader == null || (SERVED_PROTOCOL_VERSIONS as readonly string[]).includes(protocolVersionHeader)) return undefined
  const messages = Array.isArray(message) ? message : [message]
  if (messages.length === 0 || !messages.every((m) => isPlainObject(m) && (typeof m.method === 'string' || 'result' in m || 'error' in m))) return undefined
  if (messages.some((m) => (m as Record<string, unknown>).method === 'initialize')) return undefined
  const first = messages[0] as Record<string, unknown>
  const id = !Array.isArray(message) && (typeof first.id === 'string' || Number.isSafeInteger(first.id)) ? first.id : null
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: -32022,
      message: `Unsupported protocol version: ${protocolVersionHeader}. This server serves ${SERVED_PROTOCOL_VERSIONS.join(', ')}.`,
      data: { supported: SERVED_PROTOCOL_VERSIONS, requested: protocolVersionHeader },
    },
  })
}
