// The result of an MCP tools/call, made once for every path that answers one.
import type { FastifyInstance } from 'fastify'
import type { Operation } from '../core/operations.ts'
import { errorResponse } from '../core/errors.ts'
import type { Caller } from './mcp-server.ts'

/** A tools/call result: the one definition both paths send (the SDK through its encoder). */
export type ToolCallResult =
  | { content: [{ type: 'text'; text: string }]; structuredContent: Record<string, unknown>; isError?: undefined }
  | { content: [{ type: 'text'; text: string }]; isError: true; structuredContent?: undefined }

/** Runs a tool the caller's workspace has (`op`, from `registry.toolFor`) and makes its result. */
export async function toolCallResult(app: FastifyInstance, caller: Caller, op: Operation, args: Record<string, unknown> | undefined): Promise<ToolCallResult> {
  const { principal, projectRef, log } = caller
  try {
    const result = await app.registry.invoke(op, args ?? {}, { principal, projectRef, surface: 'mcp', log })
    // The text is what the output schema writes, byte for byte what POST /v1/tools/:name returns.
    const text = app.registry.serialize(op, result)
    return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown> }
  } catch (err) {
    const { body, internal } = errorResponse(err)
    if (internal) log.error({ err }, 'tool call failed')
    // The REST error object as text. No structuredContent: it would have to match the
    // tool's outputSchema, and the 2025 SDK client validates it even on errors.
    return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true }
  }
}
